/* The best rows of a BM25 query over a snapshot's postings, compiled:
 * `bm25_native.py` loads it with ctypes for `bm25.top`, whose numpy code stays
 * the reference; tests hold the two equal, score bits included.
 *
 * A row's score is its terms' contributions added rarest term first, in
 * float32, as numpy adds them. The lists are read a term at a time into a
 * score per row; before a long one, the count-th best score so far gives a
 * floor (scores only grow), and the weakest lists left whose bounds together
 * stay below it are put off: a row only they hold cannot reach it. The lists
 * put off are then added, strongest first, to the rows they can still lift to
 * the floor, by a scan of the list or a galloping search per row, whichever
 * reads less. A row tied with the count-th best stays: the search seam breaks
 * ties by chunk id.
 *
 * Plain C, no headers but libc's; built with -ffp-contract=off so that each
 * float operation rounds as numpy's does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CURATOR_BM25_ABI 1
#define MAX_TERMS 256
/* Bounds and floors are compared in double with this headroom, so that float32
 * rounding (a sum of 256 terms may be 256 ulps off, and partial sums taken in
 * another order than numpy's a few ulps) never prunes a row that reaches the
 * count-th best score; the rows kept by it are dropped by the exact count. */
#define SLACK (1.0 + 1e-4)
/* Postings a scan reads in the time of one galloping search (measured flat
 * from 16 to 64 on the peers bench). */
#define SEARCH_COST 32
/* A floor is taken before a list longer than this share of the rows scored
 * (measured flat from 1/4 to 1/16): it costs a pass over them. */
#define CHECK_SHARE 8

int curator_bm25_abi(void) { return CURATOR_BM25_ABI; }

typedef struct {
    const int32_t *rows;
    const uint16_t *counts;
    int64_t length;
    int64_t at;
    float weight;
    double bound; /* the most it adds to a score */
} List;

typedef struct {
    const float *norms; /* `Segments.norms`: each row's length normalisation */
    float k1_plus_one;  /* BM25_K1 + 1 */
} Parameters;

/* `Segments.contribution` of one posting, operation for operation. */
static inline float contribution(const Parameters *p, const List *list,
                                 int32_t row, uint16_t held) {
    float counts = (float)held;
    return ((list->weight * counts) * p->k1_plus_one) / (counts + p->norms[row]);
}

/* Moves `list->at` to the first of its rows that is `row` or after. */
static inline void seek(List *list, int32_t row) {
    const int32_t *rows = list->rows;
    int64_t low = list->at, step = 1, high;
    if (low >= list->length || rows[low] >= row) return;
    /* Gallop, then halve: the rows asked for come in order. */
    while (low + step < list->length && rows[low + step] < row) {
        low += step;
        step <<= 1;
    }
    high = low + step < list->length ? low + step : list->length;
    low += 1;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (rows[middle] < row)
            low = middle + 1;
        else
            high = middle;
    }
    list->at = low;
}

/* The `count`-th largest of `values` (reordered); 0 when there are fewer. */
static float kth(float *values, int64_t size, int32_t count) {
    if (size < count) return 0.0f;
    int64_t target = count - 1, low = 0, high = size - 1;
    while (low < high) { /* quickselect, descending */
        float pivot = values[low + (high - low) / 2];
        int64_t i = low, j = high;
        while (i <= j) {
            while (values[i] > pivot) i++;
            while (values[j] < pivot) j--;
            if (i <= j) {
                float swap = values[i];
                values[i++] = values[j];
                values[j--] = swap;
            }
        }
        if (target <= j)
            high = j;
        else if (target >= i)
            low = i;
        else
            break;
    }
    return values[target];
}

typedef struct {
    int32_t row;
    float score;
} Found;

/* `found` in ascending rows (least significant byte first; `spare`: room for
 * as many). Rows are at most 2^31 - 1. */
static void sort_by_row(Found *found, int64_t size, Found *spare) {
    int32_t top = 0;
    for (int64_t i = 0; i < size; i++)
        if (found[i].row > top) top = found[i].row;
    for (int shift = 0; shift < 32 && (top >> shift) > 0; shift += 8) {
        int64_t at[257] = {0};
        for (int64_t i = 0; i < size; i++) at[((found[i].row >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++) at[b + 1] += at[b];
        for (int64_t i = 0; i < size; i++)
            spare[at[(found[i].row >> shift) & 255]++] = found[i];
        for (int64_t i = 0; i < size; i++) found[i] = spare[i];
    }
}

/* The count-th best of the found scores (`values`: room for them). */
static float kth_found(const Found *found, int64_t size, float *values,
                       int32_t count) {
    for (int64_t i = 0; i < size; i++) values[i] = found[i].score;
    return kth(values, size, count);
}

/* The count-th best score of the rows at or above `floor` (`values`: room for
 * them), or `floor` when fewer: a new floor, scores only growing. */
static float raise_floor(const float *scores, const int32_t *rows, int64_t size,
                         float *values, int32_t count, float floor) {
    int64_t above = 0;
    for (int64_t i = 0; i < size; i++) {
        values[above] = scores[rows[i]];
        above += values[above] >= floor;
    }
    float better = kth(values, above, count);
    return better > floor ? better : floor;
}

/* The rows that the `reach` of the terms still to add can lift to `floor`
 * (less the slack: a score may round an ulp or two off numpy's). */
static int64_t hopeful(const float *scores, int32_t *rows, int64_t size,
                       double reach, float floor) {
    double lowest = (double)floor / SLACK;
    int64_t kept = 0;
    for (int64_t i = 0; i < size; i++) {
        rows[kept] = rows[i];
        kept += (double)scores[rows[i]] + reach * SLACK >= lowest;
    }
    return kept;
}

/* Adds the list's contributions to the scores of `rows` (ascending). */
static void add_by_search(const Parameters *p, List *list, const int32_t *rows,
                          int64_t size, float *scores) {
    list->at = 0;
    for (int64_t i = 0; i < size; i++) {
        seek(list, rows[i]);
        if (list->at < list->length && list->rows[list->at] == rows[i])
            scores[rows[i]] += contribution(p, list, rows[i],
                                            list->counts[list->at]);
    }
}

/* The rows (ascending) of the `count` best scores above 0, with every row tied
 * with the count-th, and their scores. `terms` lists of rows (ascending) and
 * counts, rarest first, with their weights (count in the question times idf,
 * positive); `gone` flags removed rows, or is NULL. `scores` holds a zero for
 * each of the `size` rows and is left so. Returns how many rows it wrote, or
 * -1 when more than `capacity` rows tie or memory runs out (the caller scores
 * in numpy then). Where the lists put off were not added in the terms' order,
 * the scores of the rows that may be among the best are added again in it. */
int32_t curator_bm25_top(int32_t terms, const int32_t *const *rows,
                         const uint16_t *const *counts, const int64_t *lengths_of,
                         const float *weights, float k1_plus_one,
                         const float *norms, const uint8_t *gone, int32_t count,
                         float *scores, int64_t size, int32_t *out_rows,
                         float *out_scores, int32_t capacity) {
    List lists[MAX_TERMS];
    char put_off[MAX_TERMS] = {0};
    Parameters p = {norms, k1_plus_one};
    int64_t postings = 0;
    if (terms <= 0 || count <= 0) return 0;
    if (terms > MAX_TERMS || capacity < count) return -1;
    for (int32_t t = 0; t < terms; t++) {
        lists[t] = (List){rows[t], counts[t], lengths_of[t], 0, weights[t],
                          (double)weights[t] * (double)p.k1_plus_one};
        postings += lists[t].length;
    }
    int64_t room = postings < size ? postings : size;
    if (room == 0) return 0;
    /* One more: a row is written past the rows scored before it is counted. */
    int32_t *scored_rows = malloc(sizeof(int32_t) * (size_t)(room + 1));
    int32_t *candidates = malloc(sizeof(int32_t) * (size_t)room);
    float *values = malloc(sizeof(float) * (size_t)room);
    Found *found = malloc(sizeof(Found) * (size_t)room);
    Found *spare = malloc(sizeof(Found) * (size_t)room);
    if (!scored_rows || !candidates || !values || !found || !spare) {
        free(scored_rows);
        free(candidates);
        free(values);
        free(found);
        free(spare);
        return -1;
    }

    int64_t scored = 0;
    float floor = 0.0f;
    double off_bound = 0.0; /* the bounds of the lists put off */
    int32_t last_added = -1, in_order = 1;
    for (int32_t t = 0; t < terms; t++) {
        List *list = &lists[t];
        if (put_off[t]) continue;
        if (t && scored >= count && CHECK_SHARE * list->length > scored) {
            floor = raise_floor(scores, scored_rows, scored, values, count, floor);
            /* The weakest of the lists left, while their bounds stay below. */
            for (;;) {
                int32_t weakest = -1;
                for (int32_t u = t; u < terms; u++)
                    if (!put_off[u] &&
                        (weakest < 0 || lists[u].bound < lists[weakest].bound))
                        weakest = u;
                if (weakest < 0 ||
                    (off_bound + lists[weakest].bound) * SLACK >= (double)floor)
                    break;
                put_off[weakest] = 1;
                off_bound += lists[weakest].bound;
            }
            if (put_off[t]) continue;
        }
        for (int64_t i = 0; i < list->length; i++) {
            int32_t row = list->rows[i];
            /* A removed row is never a candidate; a count of 0 (not made by
             * `terms.counted_terms`, refused from parsers) adds nothing and
             * would list its row again. */
            if ((gone && gone[row]) || list->counts[i] == 0) continue;
            scored_rows[scored] = row;
            scored += scores[row] == 0.0f;
            scores[row] += contribution(&p, list, row, list->counts[i]);
        }
        last_added = t;
    }

    /* The lists put off, strongest first, to the rows they can lift. */
    int64_t kept = scored;
    memcpy(candidates, scored_rows, sizeof(int32_t) * (size_t)scored);
    int sorted = 0;
    double reach = off_bound;
    for (;;) {
        int32_t strongest = -1;
        for (int32_t t = 0; t < terms; t++)
            if (put_off[t] &&
                (strongest < 0 || lists[t].bound > lists[strongest].bound))
                strongest = t;
        if (strongest < 0) break;
        List *list = &lists[strongest];
        put_off[strongest] = 0;
        kept = hopeful(scores, candidates, kept, reach, floor);
        reach -= list->bound;
        if (strongest < last_added) in_order = 0;
        last_added = strongest;
        if (SEARCH_COST * kept < list->length) { /* a search per row reads less */
            if (!sorted) {
                for (int64_t i = 0; i < kept; i++)
                    found[i] = (Found){candidates[i], 0.0f};
                sort_by_row(found, kept, spare);
                for (int64_t i = 0; i < kept; i++) candidates[i] = found[i].row;
                sorted = 1;
            }
            add_by_search(&p, list, candidates, kept, scores);
        } else { /* a scan: the rows scored only (a zero score is not) */
            for (int64_t i = 0; i < list->length; i++) {
                int32_t row = list->rows[i];
                if (scores[row] != 0.0f)
                    scores[row] +=
                        contribution(&p, list, row, list->counts[i]);
            }
        }
        floor = raise_floor(scores, candidates, kept, values, count, floor);
    }

    kept = hopeful(scores, candidates, kept, 0.0, floor);
    for (int64_t i = 0; i < kept; i++)
        found[i] = (Found){candidates[i], scores[candidates[i]]};
    for (int64_t i = 0; i < scored; i++) scores[scored_rows[i]] = 0.0f;
    if (!in_order) {
        /* Their scores again, in the terms' order: numpy's bits. */
        sort_by_row(found, kept, spare);
        for (int64_t i = 0; i < kept; i++) candidates[i] = found[i].row;
        for (int32_t t = 0; t < terms; t++)
            add_by_search(&p, &lists[t], candidates, kept, scores);
        for (int64_t i = 0; i < kept; i++) {
            found[i].score = scores[candidates[i]];
            scores[candidates[i]] = 0.0f;
        }
    }

    float limit = kth_found(found, kept, values, count);
    int64_t best = 0;
    for (int64_t i = 0; i < kept; i++)
        if (found[i].score > 0.0f && found[i].score >= limit)
            found[best++] = found[i];
    int32_t written = best <= capacity ? (int32_t)best : -1;
    if (written > 0) {
        sort_by_row(found, best, spare);
        for (int32_t i = 0; i < written; i++) {
            out_rows[i] = found[i].row;
            out_scores[i] = found[i].score;
        }
    }
    free(scored_rows);
    free(candidates);
    free(values);
    free(found);
    free(spare);
    return written;
}
