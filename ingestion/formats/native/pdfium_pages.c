/* A PDF page's words and rulings from pdfium, and its lines and paragraphs, one
   call a page each.

   The same reading as the Python loops of `pdf_pdfium.py` and
   `pdf_layout.glyph_lines`, which stay as the fallback and the reference (tests
   compare the two on every corpus PDF): there, each word, path segment and line
   costs a microsecond or two of Python around a few pdfium calls; here the loops
   run in C and write arrays that Python reads a column at a time. Plain C with no Python API: it is loaded with
   ctypes, and pdfium's functions are handed over by address (`curator_bind`), so
   nothing links against pypdfium2's library. Built by `make` (-ffp-contract=off:
   the arithmetic, done in doubles in the order Python does it, gives the same
   numbers bit for bit). Figures: docs/benchmarks.md, "PDF parsing". */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define CURATOR_ABI 5

/* pdf_pdfium.py's constants, which these mirror */
#define NO_TEXT 0xFFFEu
#define MAX_SPREAD 2.0
#define OFF_BASELINE 0.5
#define FLOAT_SLACK 1e-4
#define AXIS_SLACK 0.5 /* pdf_tables._AXIS_SLACK */
#define MIN_RULING 3.0 /* pdf_tables._MIN_RULING */
#define MAX_RULINGS 4000 /* pdf_tables._MAX_RULINGS */
#define MAX_OBJECTS 200000 /* pdf_pdfium._MAX_OBJECTS */
/* Forms nested deeper than Python's recursion limit: the Python walk, which
   this then leaves the page to, refuses such a page as Python would. */
#define MAX_FORM_DEPTH 900
#define PAGEOBJ_TEXT 1
#define PAGEOBJ_PATH 2
#define PAGEOBJ_FORM 5
#define SEGMENT_LINETO 0
#define SEGMENT_MOVETO 2

typedef struct { float a, b, c, d, e, f; } FloatMatrix;
typedef struct { float left, top, right, bottom; } FloatRect;
typedef struct { double a, b, c, d, e, f; } Matrix;

/* In the order of `pdf_native._FUNCTIONS`. */
static void *(*get_text_object)(void *, int);
static int (*get_char_origin)(void *, int, double *, double *);
static int (*get_loose_char_box)(void *, int, FloatRect *);
static int (*get_char_box)(void *, int, double *, double *, double *, double *);
static int (*get_matrix)(void *, int, FloatMatrix *);
static double (*get_font_size)(void *, int);
static int (*is_hyphen)(void *, int);
static int (*count_objects)(void *);
static void *(*get_object)(void *, int);
static int (*object_type)(void *);
static int (*object_matrix)(void *, FloatMatrix *);
static int (*count_form_objects)(void *);
static void *(*get_form_object)(void *, unsigned long);
static int (*count_segments)(void *);
static void *(*get_segment)(void *, int);
static int (*segment_point)(void *, float *, float *);
static int (*segment_type)(void *);
static int (*segment_close)(void *);
static unsigned (*get_unicode)(void *, int);
static int (*object_bounds)(void *, float *, float *, float *, float *);

int curator_bind(void *const *functions, int count) {
    void **targets[] = {
        (void **)&get_text_object, (void **)&get_char_origin,
        (void **)&get_loose_char_box, (void **)&get_char_box,
        (void **)&get_matrix, (void **)&get_font_size, (void **)&is_hyphen,
        (void **)&count_objects, (void **)&get_object, (void **)&object_type,
        (void **)&object_matrix, (void **)&count_form_objects,
        (void **)&get_form_object, (void **)&count_segments,
        (void **)&get_segment, (void **)&segment_point, (void **)&segment_type,
        (void **)&segment_close, (void **)&get_unicode, (void **)&object_bounds,
    };
    int wanted = (int)(sizeof targets / sizeof targets[0]);
    if (count != wanted) return -1;
    for (int i = 0; i < count; i++) {
        if (functions[i] == NULL) return -1;
        *targets[i] = functions[i];
    }
    return CURATOR_ABI;
}

/* Python's math.hypot (CPython 3.11's `vector_norm` for two coordinates), not
   the C library's hypot: the two differ in the last bit for about one pair of
   numbers in a thousand (a skewed text matrix's font size, say). Its algorithm
   for normal numbers is also that of 3.12 and on; only subnormal ones, which
   no float of pdfium's gives, take 3.11's way. */
static double python_hypot(double x, double y) {
    const double T27 = 134217729.0; /* ldexp(1.0, 27) + 1.0 */
    double vec[2] = {fabs(x), fabs(y)};
    double max = 0.0;
    int found_nan = 0;
    for (int i = 0; i < 2; i++) {
        found_nan |= isnan(vec[i]);
        if (vec[i] > max) max = vec[i];
    }
    if (isinf(max)) return max;
    if (found_nan) return NAN;
    if (max == 0.0) return max;
    double t, hi, lo, h, oldcsum, csum = 1.0, frac1 = 0.0, frac2 = 0.0, frac3 = 0.0;
    int max_e;
    frexp(max, &max_e);
    if (max_e >= -1023) {
        double scale = ldexp(1.0, -max_e);
        for (int i = 0; i < 2; i++) {
            x = vec[i] * scale; /* lossless scaling */
            t = x * T27;
            hi = t - (t - x);
            lo = x - hi;
            x = hi * hi;
            oldcsum = csum;
            csum += x;
            frac1 += (oldcsum - csum) + x;
            x = 2.0 * hi * lo;
            oldcsum = csum;
            csum += x;
            frac2 += (oldcsum - csum) + x;
            frac3 += lo * lo;
        }
        h = sqrt(csum - 1.0 + (frac1 + frac2 + frac3));
        x = h;
        t = x * T27;
        hi = t - (t - x);
        lo = x - hi;
        x = -hi * hi;
        oldcsum = csum;
        csum += x;
        frac1 += (oldcsum - csum) + x;
        x = -2.0 * hi * lo;
        oldcsum = csum;
        csum += x;
        frac2 += (oldcsum - csum) + x;
        x = -lo * lo;
        oldcsum = csum;
        csum += x;
        frac3 += (oldcsum - csum) + x;
        x = csum - 1.0 + (frac1 + frac2 + frac3);
        return (h + x / (2.0 * h)) / scale;
    }
    for (int i = 0; i < 2; i++) { /* ldexp(1.0, -max_e) would overflow */
        x = vec[i] / max;
        x = x * x;
        oldcsum = csum;
        csum += x;
        frac1 += (oldcsum - csum) + x;
    }
    return max * sqrt(csum - 1.0 + frac1);
}

/* For the tests, which hold it equal to math.hypot. */
double curator_hypot(double x, double y) { return python_hypot(x, y); }

/* A glyph of pdf_layout: its text is text[first:end] of the page text with
   " -" appended (a space glyph, a lone hyphen), plus "-" when `flags` has
   HYPHEN. SPACE marks a glyph of whitespace whose text is its own (glyphs made
   from pdfminer's, `pdf_native.NativePages.glyphs_from`). */
#define HYPHEN 1
#define SPACE 2
typedef struct {
    int32_t first, end, direction, flags;
    double start, stop, across, size;
} Glyph;

typedef struct {
    Glyph *glyphs;
    int32_t glyph_count, glyph_capacity;
    /* where the text object changes: the glyph count then, and the object */
    int32_t *run_glyphs;
    uint64_t *run_objects;
    int32_t run_count, run_glyph_capacity, run_object_capacity;
    uint64_t *text_objects; /* in drawing order */
    int32_t text_object_count, text_object_capacity;
    double *rulings; /* x0, top, x1, bottom */
    int32_t ruling_count, ruling_capacity;
    int32_t failed; /* out of memory */
    struct Line *lines;
    int32_t line_count, line_capacity;
    uint32_t *line_text; /* every line's text, one after the other */
    int32_t line_text_length, line_text_capacity;
    int32_t *paragraph_last, *recent; /* work space of curator_page_lines */
    int32_t paragraph_last_capacity, recent_capacity;
} Context;

Context *curator_context_new(void) { return calloc(1, sizeof(Context)); }

void curator_context_free(Context *context) {
    if (context == NULL) return;
    free(context->glyphs);
    free(context->run_glyphs);
    free(context->run_objects);
    free(context->text_objects);
    free(context->rulings);
    free(context->lines);
    free(context->line_text);
    free(context->paragraph_last);
    free(context->recent);
    free(context);
}

static int grow(void **items, int32_t *capacity, int32_t needed, size_t size) {
    if (needed <= *capacity) return 1;
    int64_t wanted = *capacity ? (int64_t)*capacity * 2 : 1024;
    while (wanted < needed) wanted *= 2;
    if (wanted > INT32_MAX) return 0;
    void *grown = realloc(*items, (size_t)wanted * size);
    if (grown == NULL) return 0;
    *items = grown;
    *capacity = (int32_t)wanted;
    return 1;
}

/* Each character's code point, for a page whose text pdfium wrote with fewer
   or more characters than it counts (`pdf_pdfium._page_text`). */
void curator_page_unicode(void *textpage, int32_t count, uint32_t *codes) {
    for (int32_t index = 0; index < count; index++)
        codes[index] = get_unicode(textpage, index);
}

static int by_address(const void *one, const void *other) {
    uint64_t a = *(const uint64_t *)one, b = *(const uint64_t *)other;
    return (a > b) - (a < b);
}

/* `pdf_pdfium.lost_text_objects`: of the `count` text objects in `candidates`
   (sorted here), those drawn with an extent (bounds that are not a point) of
   which the text page holds no character. Returns their number, or -1. */
int32_t curator_lost_text_objects(void *textpage, int32_t chars, uint64_t *candidates,
                                  int32_t count) {
    int32_t drawn = 0;
    for (int32_t i = 0; i < count; i++) {
        float left, bottom, right, top;
        void *object = (void *)(uintptr_t)candidates[i];
        if (object_bounds(object, &left, &bottom, &right, &top) &&
            (right > left || top > bottom))
            candidates[drawn++] = candidates[i];
    }
    if (drawn == 0) return 0;
    qsort(candidates, (size_t)drawn, sizeof(uint64_t), by_address);
    unsigned char *held = calloc((size_t)drawn, 1);
    if (held == NULL) return -1;
    for (int32_t index = 0; index < chars; index++) {
        uint64_t object = (uint64_t)(uintptr_t)get_text_object(textpage, index);
        uint64_t *found = bsearch(&object, candidates, (size_t)drawn, sizeof(uint64_t),
                                  by_address);
        if (found != NULL) held[found - candidates] = 1;
    }
    int32_t lost = 0;
    for (int32_t i = 0; i < drawn; i++) lost += !held[i];
    free(held);
    return lost;
}

typedef struct {
    uint64_t object;
    int32_t place;
} Placed;

static int by_object(const void *one, const void *other) {
    uint64_t a = ((const Placed *)one)->object, b = ((const Placed *)other)->object;
    return (a > b) - (a < b);
}

/* After curator_page_words, against the page's text objects in drawing order
   (`drawn`, `count` of them): `pdf_pdfium._placed` (where the drawing place of
   the runs changes, into `places` and `starts`, room for run_count + 1) and
   `pdf_pdfium.lost_text_objects`. `out`: whether the runs are in drawing order,
   the number of places written, the lost objects. Returns 0, or -1. */
int32_t curator_page_order(Context *c, void *textpage, int32_t chars,
                           const uint64_t *drawn, int32_t count, int32_t *places,
                           int32_t *starts, int32_t *out) {
    Placed *index = malloc((size_t)(count ? count : 1) * sizeof(Placed));
    uint64_t *runs = malloc((size_t)(c->run_count ? c->run_count : 1) * sizeof(uint64_t));
    uint64_t *candidates = malloc((size_t)(count ? count : 1) * sizeof(uint64_t));
    if (index == NULL || runs == NULL || candidates == NULL) {
        free(index);
        free(runs);
        free(candidates);
        return -1;
    }
    for (int32_t i = 0; i < count; i++) index[i] = (Placed){drawn[i], i};
    qsort(index, (size_t)count, sizeof(Placed), by_object);
    int32_t place = -1, placed = 1, in_order = 1;
    places[0] = -1;
    starts[0] = 0;
    for (int32_t i = 0; i < c->run_count; i++) {
        Placed key = {c->run_objects[i], 0};
        const Placed *found =
            count ? bsearch(&key, index, (size_t)count, sizeof(Placed), by_object) : NULL;
        int32_t here = found ? found->place : place; /* order.get(object, drawn) */
        if (here != place) {
            in_order = in_order && here > place;
            place = here;
            places[placed] = place;
            starts[placed++] = c->run_glyphs[i];
        }
        runs[i] = c->run_objects[i];
    }
    qsort(runs, (size_t)c->run_count, sizeof(uint64_t), by_address);
    int32_t unseen = 0;
    for (int32_t i = 0; i < count; i++)
        if (c->run_count == 0 || !bsearch(&drawn[i], runs, (size_t)c->run_count,
                                          sizeof(uint64_t), by_address))
            candidates[unseen++] = drawn[i];
    int32_t lost = unseen ? curator_lost_text_objects(textpage, chars, candidates, unseen)
                          : 0;
    free(index);
    free(runs);
    free(candidates);
    if (lost < 0) return -1;
    out[0] = in_order;
    out[1] = placed;
    out[2] = lost;
    return 0;
}

/* ---- words ----------------------------------------------------------------- */

static int is_space(uint32_t c) { /* str.isspace(), which re's \s follows */
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 ||
           c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

/* The font at hand, as `_Placer.take_font` keeps it. */
typedef struct {
    double size, a, b, slack;
    int rightwards;
} Font;

typedef struct {
    Context *context;
    void *textpage;
    int32_t space_at, dash_at; /* the appended " -" */
    Font placer;
    FloatMatrix matrix;
    double origin[4];
    FloatRect loose;
    double tight[4];
} Words;

static Glyph *next_glyph(Words *w) {
    Context *c = w->context;
    if (!grow((void **)&c->glyphs, &c->glyph_capacity, c->glyph_count + 1,
              sizeof(Glyph))) {
        c->failed = 1;
        return NULL;
    }
    return &c->glyphs[c->glyph_count++];
}

static void take_font(Words *w, int index) {
    get_matrix(w->textpage, index, &w->matrix); /* a failed call keeps the last */
    double a = w->matrix.a, b = w->matrix.b;
    double norm = python_hypot(a, b);
    if (norm == 0.0) norm = 1.0;
    w->placer.a = a / norm;
    w->placer.b = b / norm;
    w->placer.rightwards = a > 0 && fabs(b) <= a;
    double size = get_font_size(w->textpage, index) *
                  python_hypot((double)w->matrix.c, (double)w->matrix.d);
    w->placer.size = size == 0.0 ? 1.0 : size;
    w->placer.slack = FLOAT_SLACK * fabs(w->placer.size);
}

/* `_Placer.glyph`: from the first character's origin to the end of `last`. */
static void place(Words *w, int32_t first, int32_t end, int hyphen, int last) {
    Glyph *g = next_glyph(w);
    if (g == NULL) return;
    g->first = first;
    g->end = end;
    g->flags = hyphen ? HYPHEN : 0;
    Font *f = &w->placer;
    double *origin = w->origin;
    g->size = f->size;
    if (fabs(f->a) >= fabs(f->b)) {
        get_loose_char_box(w->textpage, last, &w->loose);
        if (f->a >= 0) {
            g->direction = 0;
            g->start = origin[0];
            g->stop = (double)w->loose.right + f->slack;
            g->across = origin[3];
        } else {
            g->direction = 2;
            g->start = -origin[0];
            g->stop = f->slack - (double)w->loose.right;
            g->across = -origin[3];
        }
        return;
    }
    double *t = w->tight; /* left, right, bottom, top */
    get_char_box(w->textpage, last, &t[0], &t[1], &t[2], &t[3]);
    if (f->b >= 0) {
        g->direction = 1;
        g->start = origin[1];
        g->stop = t[3];
        g->across = -origin[2];
    } else {
        g->direction = 3;
        g->start = -origin[1];
        g->stop = -t[2];
        g->across = origin[2];
    }
}

/* `_Placer.char_glyphs`: a glyph a character. */
static void char_glyphs(Words *w, const uint32_t *text, int32_t first, int32_t end) {
    for (int32_t index = first; index < end; index++) {
        int32_t from = index, to = index + 1;
        if (text[index] == NO_TEXT) {
            if (is_hyphen(w->textpage, index) != 1) continue;
            from = w->dash_at;
            to = from + 1;
        }
        get_char_origin(w->textpage, index, &w->origin[0], &w->origin[1]);
        w->origin[2] = w->origin[0];
        w->origin[3] = w->origin[1];
        place(w, from, to, 0, index);
    }
}

/* `pdf_pdfium.page_words` up to the drawing order: the glyphs of the words of
   `text` (pdfium's text, one code point a character index, `count` of them)
   and the runs of one text object. Returns the number of glyphs, or -1. */
int32_t curator_page_words(Context *context, void *textpage, const uint32_t *text,
                           int32_t count) {
    Words w = {0};
    w.context = context;
    w.textpage = textpage;
    w.space_at = count;
    w.dash_at = count + 1;
    w.placer = (Font){1.0, 1.0, 0.0, 0.0, 1};
    context->glyph_count = context->run_count = 0;
    context->failed = 0;
    /* the loop's own copy of the font, as page_words keeps it in locals */
    double size = 0.0, a = 0.0, b = 0.0, slack = 0.0;
    int rightwards = 1;
    void *current = NULL;
    int32_t at = 0;
    while (at < count && !context->failed) {
        if (is_space(text[at])) {
            at++;
            continue;
        }
        /* a word: [^\s\ufffe]+\ufffe? or a lone \ufffe */
        int32_t first = at, end = at + 1;
        if (text[first] != NO_TEXT) {
            while (end < count && !is_space(text[end]) && text[end] != NO_TEXT) end++;
            if (end < count && text[end] == NO_TEXT) end++;
        }
        at = end;
        int32_t shown_first = first, shown_end = end, hyphen = 0;
        if (text[end - 1] == NO_TEXT) { /* a hyphen ending a line, or no text */
            int dash = is_hyphen(textpage, end - 1) == 1;
            if (end - 1 == first) {
                if (!dash) continue;
                shown_first = w.dash_at;
                shown_end = shown_first + 1;
            } else {
                shown_end = end - 1;
                hyphen = dash;
            }
        }
        void *object = get_text_object(textpage, first);
        if (object != current) {
            current = object;
            take_font(&w, first);
            size = w.placer.size;
            a = w.placer.a;
            b = w.placer.b;
            slack = w.placer.slack;
            rightwards = w.placer.rightwards;
            if (!grow((void **)&context->run_glyphs, &context->run_glyph_capacity,
                      context->run_count + 1, sizeof(int32_t)) ||
                !grow((void **)&context->run_objects, &context->run_object_capacity,
                      context->run_count + 1, sizeof(uint64_t))) {
                context->failed = 1;
                break;
            }
            context->run_glyphs[context->run_count] = context->glyph_count;
            context->run_objects[context->run_count] = (uint64_t)(uintptr_t)object;
            context->run_count++;
        }
        if (first > 0 && text[first - 1] == ' ' && context->glyph_count > 0) {
            Glyph before = context->glyphs[context->glyph_count - 1];
            Glyph *g = next_glyph(&w);
            if (g == NULL) break;
            *g = (Glyph){w.space_at, w.space_at + 1, before.direction, 0,
                         before.stop, before.stop, before.across, before.size};
        }
        double *origin = w.origin;
        get_char_origin(textpage, first, &origin[0], &origin[1]);
        int32_t last = end - 1;
        if (last == first) {
            origin[2] = origin[0];
            origin[3] = origin[1];
        } else {
            get_char_origin(textpage, last, &origin[2], &origin[3]);
            double dx = origin[2] - origin[0], dy = origin[3] - origin[1];
            double across = dy * a - dx * b;
            if (!(-OFF_BASELINE * size <= across && across <= OFF_BASELINE * size &&
                  dx * a + dy * b <= MAX_SPREAD * size * (double)(last - first))) {
                char_glyphs(&w, text, first, end);
                continue;
            }
        }
        if (rightwards) {
            get_loose_char_box(textpage, last, &w.loose);
            Glyph *g = next_glyph(&w);
            if (g == NULL) break;
            *g = (Glyph){shown_first, shown_end, 0, hyphen ? HYPHEN : 0, origin[0],
                         (double)w.loose.right + slack, origin[3], size};
        } else {
            place(&w, shown_first, shown_end, hyphen, last);
        }
    }
    return context->failed ? -1 : context->glyph_count;
}

/* ---- drawing --------------------------------------------------------------- */

static void add_ruling(Context *c, double x0, double y0, double x1, double y1) {
    double box[4];
    if (fabs(y1 - y0) <= AXIS_SLACK && fabs(x1 - x0) >= MIN_RULING) {
        box[0] = x1 < x0 ? x1 : x0;
        box[1] = -y0;
        box[2] = x1 > x0 ? x1 : x0;
        box[3] = -y0;
    } else if (fabs(x1 - x0) <= AXIS_SLACK && fabs(y1 - y0) >= MIN_RULING) {
        box[0] = x0;
        box[1] = -(y1 > y0 ? y1 : y0);
        box[2] = x0;
        box[3] = -(y1 < y0 ? y1 : y0);
    } else {
        return;
    }
    if (!grow((void **)&c->rulings, &c->ruling_capacity, 4 * (c->ruling_count + 1),
              sizeof(double))) {
        c->failed = 1;
        return;
    }
    double *at = &c->rulings[4 * c->ruling_count++];
    at[0] = box[0];
    at[1] = box[1];
    at[2] = box[2];
    at[3] = box[3];
}

static Matrix times(Matrix inner, Matrix outer) { /* pdf_pdfium._times */
    return (Matrix){
        inner.a * outer.a + inner.b * outer.c,
        inner.a * outer.b + inner.b * outer.d,
        inner.c * outer.a + inner.d * outer.c,
        inner.c * outer.b + inner.d * outer.d,
        inner.e * outer.a + inner.f * outer.c + outer.e,
        inner.e * outer.b + inner.f * outer.d + outer.f,
    };
}

typedef struct {
    Context *context;
    int64_t budget;
    int depth;
    FloatMatrix matrix;
    float point[2];
} Drawing;

static void path_rulings(Drawing *d, void *path, Matrix m) {
    Context *c = d->context;
    int have_start = 0, have_current = 0;
    double start[2] = {0, 0}, current[2] = {0, 0};
    int segments = count_segments(path);
    for (int index = 0; index < segments; index++) {
        void *segment = get_segment(path, index);
        segment_point(segment, &d->point[0], &d->point[1]);
        double px = d->point[0], py = d->point[1];
        double here[2] = {px * m.a + py * m.c + m.e, px * m.b + py * m.d + m.f};
        int kind = segment_type(segment);
        if (kind == SEGMENT_MOVETO) {
            start[0] = current[0] = here[0];
            start[1] = current[1] = here[1];
            have_start = have_current = 1;
            continue;
        }
        if (kind == SEGMENT_LINETO && have_current)
            add_ruling(c, current[0], current[1], here[0], here[1]);
        current[0] = here[0];
        current[1] = here[1];
        have_current = 1;
        if (have_start && segment_close(segment)) {
            add_ruling(c, current[0], current[1], start[0], start[1]);
            current[0] = start[0];
            current[1] = start[1];
        }
    }
}

/* `pdf_pdfium._walk` over a page (form == NULL) or a form's objects. */
static void walk(Drawing *d, void *page, void *form, Matrix outer, int identity) {
    Context *c = d->context;
    int count = form ? count_form_objects(form) : count_objects(page);
    for (int index = 0; index < count && !c->failed; index++) {
        void *object = form ? get_form_object(form, (unsigned long)index)
                            : get_object(page, index);
        if (--d->budget < 0) return;
        int kind = object_type(object);
        if (kind == PAGEOBJ_TEXT) {
            if (!grow((void **)&c->text_objects, &c->text_object_capacity,
                      c->text_object_count + 1, sizeof(uint64_t))) {
                c->failed = 1;
                return;
            }
            c->text_objects[c->text_object_count++] = (uint64_t)(uintptr_t)object;
            continue;
        }
        if ((kind != PAGEOBJ_PATH && kind != PAGEOBJ_FORM) ||
            !object_matrix(object, &d->matrix))
            continue;
        FloatMatrix *f = &d->matrix;
        Matrix inner = {f->a, f->b, f->c, f->d, f->e, f->f};
        if (kind == PAGEOBJ_PATH) {
            if (c->ruling_count <= MAX_RULINGS)
                path_rulings(d, object, identity ? inner : times(inner, outer));
        } else if (++d->depth > MAX_FORM_DEPTH) {
            c->failed = 1;
            return;
        } else {
            walk(d, page, object, times(inner, outer), 0);
            d->depth--;
        }
    }
}

/* `pdf_pdfium.page_drawing`: the page's text objects in drawing order and its
   rulings. Returns 0, or -1. */
int32_t curator_page_drawing(Context *context, void *page) {
    context->text_object_count = context->ruling_count = 0;
    context->failed = 0;
    Drawing d = {0};
    d.context = context;
    d.budget = MAX_OBJECTS;
    Matrix identity = {1.0, 0.0, 0.0, 1.0, 0.0, 0.0};
    walk(&d, page, NULL, identity, 1);
    return context->failed ? -1 : 0;
}

/* ---- lines and paragraphs -------------------------------------------------- */

/* pdf_layout's constants, which these mirror */
#define LINE_TOLERANCE 0.5
#define WORD_GAP 0.1
#define CJK_WORD_GAP 1.0
#define MAX_LINE_STEP 1.6
#define MAX_SIZE_RATIO 1.25
#define MAX_WORD_GAP 1.0
#define OPEN_PARAGRAPHS 16

/* A line of pdf_layout (`Line`): its text is line_text[text_start:][:text_length]. */
typedef struct Line {
    int32_t direction, paragraph, text_start, text_length;
    double start, end, across, size;
} Line;

typedef struct {
    const uint32_t *ranges; /* first, last code point of each CJK range */
    int32_t count;
} Ranges;

static int is_cjk(const Ranges *cjk, uint32_t c) { /* textutil.is_cjk */
    for (int32_t i = 0; i < cjk->count; i++)
        if (c >= cjk->ranges[2 * i] && c <= cjk->ranges[2 * i + 1]) return 1;
    return 0;
}

static void to_page(int direction, double along, double across, double *x, double *y) {
    switch (direction) {
    case 0: *x = along; *y = across; break;
    case 1: *x = -across; *y = along; break;
    case 2: *x = -along; *y = -across; break;
    default: *x = across; *y = -along; break;
    }
}

/* `pdf_layout._place_line`: the paragraph line `at` goes to. */
static int32_t place_line(Context *c, int32_t at, int32_t previous, int32_t previous_home,
                          int32_t *paragraphs, int32_t *recent_count) {
    Line *line = &c->lines[at];
    int32_t home = -1;
    if (previous >= 0 && c->lines[previous].direction != line->direction) {
        Line *before = &c->lines[previous];
        double x0, y0, x1, y1;
        to_page(before->direction, before->end, before->across, &x0, &y0);
        to_page(line->direction, line->start, line->across, &x1, &y1);
        /* max(line.size, previous.size): the first unless the second is larger
           (a NaN first stays) */
        double scale = before->size > line->size ? before->size : line->size;
        if (python_hypot(x1 - x0, y1 - y0) <= MAX_LINE_STEP * scale)
            home = previous_home;
    }
    if (home < 0) {
        double across = line->across, size = line->size, start = line->start;
        int32_t open = *recent_count < OPEN_PARAGRAPHS ? *recent_count : OPEN_PARAGRAPHS;
        for (int32_t k = 1; k <= open; k++) {
            int32_t index = c->recent[*recent_count - k];
            Line *above = &c->lines[c->paragraph_last[index]];
            double step = above->across - across;
            double above_size = above->size;
            double scale = above_size > size ? above_size : size;
            if (step <= 0 || step > MAX_LINE_STEP * scale) continue;
            double smaller = size < above_size ? size : above_size;
            if (above->direction == line->direction && LINE_TOLERANCE * scale < step &&
                above->start - 0.5 * (above->end - above->start) <= start &&
                start <= above->end && scale <= MAX_SIZE_RATIO * smaller) {
                home = index;
                break;
            }
        }
    }
    if (home < 0) {
        home = (*paragraphs)++;
        if (!grow((void **)&c->paragraph_last, &c->paragraph_last_capacity, home + 1,
                  sizeof(int32_t)) ||
            !grow((void **)&c->recent, &c->recent_capacity, home + 1, sizeof(int32_t))) {
            c->failed = 1;
            return home;
        }
    } else { /* recent.remove(home) */
        int32_t i = 0;
        while (i < *recent_count && c->recent[i] != home) i++;
        if (i < *recent_count) {
            for (; i + 1 < *recent_count; i++) c->recent[i] = c->recent[i + 1];
            (*recent_count)--;
        }
    }
    c->paragraph_last[home] = at;
    c->recent[(*recent_count)++] = home;
    line->paragraph = home;
    return home;
}

static int put_text(Context *c, const uint32_t *text, int32_t count, const Glyph *g,
                    int space) {
    int hyphen = (g->flags & HYPHEN) != 0;
    int32_t length = (g->end - g->first) + (space ? 1 : 0) + hyphen;
    if (!grow((void **)&c->line_text, &c->line_text_capacity,
              c->line_text_length + length, sizeof(uint32_t))) {
        c->failed = 1;
        return 0;
    }
    uint32_t *out = &c->line_text[c->line_text_length];
    if (space) *out++ = ' ';
    for (int32_t i = g->first; i < g->end; i++)
        *out++ = i < count ? text[i] : (i == count ? ' ' : '-'); /* the " -" after it */
    if (hyphen) *out++ = '-';
    c->line_text_length += length;
    return 1;
}

static uint32_t first_char(const uint32_t *text, int32_t count, const Glyph *g) {
    return g->first < count ? text[g->first] : (g->first == count ? ' ' : '-');
}

static uint32_t last_char(const uint32_t *text, int32_t count, const Glyph *g) {
    if (g->flags & HYPHEN) return '-';
    int32_t i = g->end - 1;
    return i < count ? text[i] : (i == count ? ' ' : '-');
}

/* `pdf_layout.glyph_lines` over the glyphs of curator_page_words (`glyphs`, in
   drawing order) and their page text: lines in the order they start, each with
   its paragraph. Returns the number of lines, or -1. */
int32_t curator_page_lines(Context *c, const Glyph *glyphs, int32_t count,
                           const uint32_t *text, int32_t text_count,
                           const uint32_t *cjk_ranges, int32_t range_count) {
    Ranges cjk = {cjk_ranges, range_count};
    c->line_count = c->line_text_length = 0;
    c->failed = 0;
    int32_t paragraphs = 0, recent_count = 0, home = -1, line = -1;
    int pending_space = 0;
    int line_direction = -1;
    double line_end = 0.0, line_across = 0.0, line_size = 0.0;
    uint32_t last = 0; /* the line's last character */
    for (int32_t i = 0; i < count && !c->failed; i++) {
        const Glyph *g = &glyphs[i];
        if (g->first == text_count || (g->flags & SPACE)) { /* whitespace */
            pending_space = 1;
            continue;
        }
        double start = g->start, end = g->stop, across = g->across, size = g->size;
        if (g->direction == line_direction) {
            double scale = size > line_size ? size : line_size;
            if (fabs(across - line_across) <= LINE_TOLERANCE * scale &&
                line_end - scale <= start && start <= line_end + MAX_WORD_GAP * scale) {
                double gap = start - line_end;
                uint32_t first = first_char(text, text_count, g);
                int space;
                if (last >= 0x2E80 && first >= 0x2E80 && is_cjk(&cjk, last) &&
                    is_cjk(&cjk, first))
                    space = gap > CJK_WORD_GAP * scale;
                else
                    space = pending_space || gap > WORD_GAP * scale;
                if (!put_text(c, text, text_count, g, space)) break;
                c->lines[line].text_length +=
                    (g->end - g->first) + space + ((g->flags & HYPHEN) != 0);
                last = last_char(text, text_count, g);
                line_end = end > line_end ? end : line_end;
                line_across = across;
                line_size = scale;
                pending_space = 0;
                continue;
            }
        }
        if (line >= 0) {
            c->lines[line].end = line_end;
            c->lines[line].across = line_across;
            c->lines[line].size = line_size;
        }
        if (!grow((void **)&c->lines, &c->line_capacity, c->line_count + 1,
                  sizeof(Line))) {
            c->failed = 1;
            break;
        }
        int32_t at = c->line_count++;
        c->lines[at] = (Line){g->direction, -1, c->line_text_length, 0,
                              start, end, across, size};
        if (!put_text(c, text, text_count, g, 0)) break;
        c->lines[at].text_length = (g->end - g->first) + ((g->flags & HYPHEN) != 0);
        home = place_line(c, at, line, home, &paragraphs, &recent_count);
        line = at;
        line_direction = g->direction;
        line_end = end;
        line_across = across;
        line_size = size;
        last = last_char(text, text_count, g);
        pending_space = 0;
    }
    if (line >= 0 && !c->failed) {
        c->lines[line].end = line_end;
        c->lines[line].across = line_across;
        c->lines[line].size = line_size;
    }
    return c->failed ? -1 : c->line_count;
}
