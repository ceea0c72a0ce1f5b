// The Ask page: streams an answer from /api/chat/stream (fetch, since
// EventSource cannot POST), shows it with its citations, opens a cited passage
// beside it, and sends feedback. Text from answers is set with textContent only;
// the one HTML inserted is the server's rendered source panel.
(function () {
  "use strict";

  var EMPTY_ID = "00000000-0000-0000-0000-000000000000";

  function el(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, attributes[name]);
    });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // "id: 1\nevent: x\ndata: {...}" blocks, separated by a blank line.
  function parseEvent(block) {
    var event = { name: "message", data: "" };
    block.split("\n").forEach(function (line) {
      var colon = line.indexOf(": ");
      if (colon < 0) return;
      var field = line.slice(0, colon);
      var value = line.slice(colon + 2);
      if (field === "event") event.name = value;
      if (field === "data") event.data += value;
    });
    try {
      event.data = event.data ? JSON.parse(event.data) : {};
    } catch (error) {
      event.data = {};
    }
    return event;
  }

  Curator.on("ask", function (root) {
    var strings = JSON.parse(document.getElementById("ask-strings").textContent);
    var form = document.getElementById("ask-form");
    var thread = document.getElementById("thread");
    var slot = document.getElementById("source-slot");
    var status = document.getElementById("ask-status");
    if (!form) return;
    var question = form.querySelector("[name=question]");
    var conversation = form.querySelector("[name=conversation_id]");
    var submit = form.querySelector("[type=submit]");

    function sourceUrl(documentId, query) {
      var base = root.getAttribute("data-source-url").replace(EMPTY_ID, documentId);
      var params = new URLSearchParams();
      Object.keys(query).forEach(function (key) {
        if (query[key] !== null && query[key] !== undefined && query[key] !== "") {
          params.set(key, query[key]);
        }
      });
      return base + "?" + params.toString();
    }

    // The first claim citing the source is the sentence the panel marks.
    function citedSourceUrl(source, claims) {
      var probe = (source.excerpt || "").replace(/^…|…$/g, "").trim().slice(0, 120);
      var quote = "";
      (claims || []).some(function (claim) {
        if ((claim.source_ids || []).indexOf(source.id) < 0) return false;
        quote = claim.text.replace(/\s*\[S\d+\]/g, "").trim().slice(0, 300);
        return true;
      });
      return sourceUrl(source.document_id, { page: source.page, excerpt: probe, quote: quote });
    }

    function openSource(url, trigger) {
      fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          return response.text();
        })
        .then(function (html) {
          slot.innerHTML = html;
          slot.hidden = false;
          root.classList.add("with-source");
          var panel = slot.querySelector("[data-testid=source-panel]");
          var close = slot.querySelector("[data-close-source]");
          if (close) {
            close.addEventListener("click", function () {
              slot.hidden = true;
              slot.innerHTML = "";
              root.classList.remove("with-source");
              if (trigger) trigger.focus();
            });
          }
          if (panel) panel.focus();
        })
        .catch(function () {
          slot.hidden = false;
          slot.textContent = "";
          slot.appendChild(el("p", { class: "error", role: "alert" }, strings.source_missing));
        });
    }

    function sourceLabel(number, source) {
      var parts = ["[" + number + "] " + source.filename];
      parts.push(strings.version + " " + source.document_version);
      if (source.page !== null && source.page !== undefined) {
        parts.push(strings.page + " " + source.page);
      }
      return parts.join(" · ");
    }

    function citationButton(text, url, attributes) {
      var button = el("button", Object.assign({ type: "button" }, attributes || {}), text);
      button.addEventListener("click", function () {
        openSource(url, button);
      });
      return button;
    }

    // The answer's lines, each "[S1]" marker a button that opens its source.
    function answerText(data, urls) {
      var box = el("div", { class: "answer-text", "data-testid": "answer" });
      data.answer.split("\n").forEach(function (line) {
        var paragraph = el("p");
        var last = 0;
        line.replace(/\[S(\d+)\]/g, function (marker, number, offset) {
          paragraph.appendChild(document.createTextNode(line.slice(last, offset)));
          var url = urls["S" + number];
          if (url) {
            paragraph.appendChild(
              citationButton("[" + number + "]", url, {
                class: "cite-ref",
                "aria-label": strings.source + " " + number,
              })
            );
          } else {
            paragraph.appendChild(document.createTextNode(marker));
          }
          last = offset + marker.length;
          return marker;
        });
        paragraph.appendChild(document.createTextNode(line.slice(last)));
        box.appendChild(paragraph);
      });
      return box;
    }

    function confidenceBadge(level) {
      var kind = { high: "good", medium: "warn", low: "bad" }[level] || "warn";
      return el(
        "span",
        { class: "badge " + kind, "data-testid": "confidence", "data-confidence": level },
        strings["confidence_" + level] || level
      );
    }

    function showClosest(box, data, knowledgeBaseIds) {
      fetch(root.getAttribute("data-search-url"), {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "X-CSRFToken": Curator.csrfToken(),
        },
        body: JSON.stringify({
          question: data.resolved_question || data.question,
          knowledge_base_ids: knowledgeBaseIds,
          top_k: 3,
        }),
      })
        .then(function (response) {
          return response.ok ? response.json() : { results: [] };
        })
        .then(function (found) {
          var results = found.results || [];
          box.appendChild(el("h3", {}, strings.closest));
          if (!results.length) {
            box.appendChild(el("p", { class: "muted" }, strings.no_closest));
            return;
          }
          var list = el("ol", { class: "closest" });
          results.forEach(function (result) {
            var item = el("li");
            item.appendChild(el("p", { class: "muted" }, sourceLabel(list.children.length + 1, result)));
            var text = result.text.length > 300 ? result.text.slice(0, 300) + "…" : result.text;
            item.appendChild(el("blockquote", {}, text));
            item.appendChild(
              citationButton(
                strings.open_passage,
                sourceUrl(result.document_id, { chunk: result.chunk_id }),
                { class: "secondary small" }
              )
            );
            list.appendChild(item);
          });
          box.appendChild(list);
        })
        .catch(function () {});
    }

    function feedbackForm(data, asked, knowledgeBaseIds) {
      var box = el("div", { class: "feedback stack" });
      var id = "comment-" + Math.random().toString(36).slice(2);
      box.appendChild(el("p", { class: "feedback-question" }, strings.feedback_question));
      box.appendChild(el("label", { for: id }, strings.comment));
      var comment = el("textarea", { id: id, maxlength: "2000", class: "comment" });
      box.appendChild(comment);
      var buttons = el("div", { class: "buttons" });
      var up = el("button", { type: "button", class: "secondary", "data-testid": "feedback-up" }, strings.helpful);
      var down = el("button", { type: "button", class: "secondary", "data-testid": "feedback-down" }, strings.not_helpful);
      buttons.appendChild(up);
      buttons.appendChild(down);
      box.appendChild(buttons);
      var said = el("p", { role: "status" });
      box.appendChild(said);

      function send(helpful) {
        up.disabled = down.disabled = true;
        fetch(root.getAttribute("data-feedback-url"), {
          method: "POST",
          credentials: "same-origin",
          headers: {
            "Content-Type": "application/json",
            Accept: "application/json",
            "X-CSRFToken": Curator.csrfToken(),
          },
          body: JSON.stringify({
            question: asked,
            answer: data.answer,
            helpful: helpful,
            comment: comment.value.trim(),
            refused: data.refused,
            sources: data.sources,
            conversation_id: data.conversation_id,
            knowledge_base_ids: knowledgeBaseIds,
          }),
        })
          .then(function (response) {
            if (response.status === 201) {
              said.className = "notice";
              said.setAttribute("data-testid", "feedback-saved");
              said.textContent = strings.thanks;
              comment.disabled = true;
              return;
            }
            return response
              .json()
              .catch(function () {
                return {};
              })
              .then(function (body) {
                throw { status: response.status, body: body };
              });
          })
          .catch(function (failure) {
            up.disabled = down.disabled = false;
            said.className = "error";
            said.textContent = failure && failure.status
              ? describe(failure.status, failure.body)
              : strings.network;
          });
      }
      up.addEventListener("click", function () { send(true); });
      down.addEventListener("click", function () { send(false); });
      return box;
    }

    function describe(status, body) {
      var code = body && body.error_code;
      var message;
      if (status === 429 || code === "throttled" || code === "too_many_streams") {
        message = strings.throttled;
      } else if (code === "search_unavailable") {
        message = strings.search_unavailable;
      } else if (status === 404 || code === "not_found") {
        message = strings.not_found;
      } else if (status === 401 || status === 403) {
        message = strings.signed_out;
      } else if (status === 422 || code === "validation_error") {
        message = strings.invalid + ": " + ((body && body.detail) || "");
      } else {
        message = strings.failed + ((body && body.detail) ? ": " + body.detail : ".");
      }
      return code ? message + " (" + strings.error_code + ": " + code + ")" : message;
    }

    function showError(turn, message) {
      var live = turn.querySelector(".live");
      if (live) live.hidden = true;
      turn.appendChild(el("p", { class: "error", role: "alert", "data-testid": "ask-error" }, message));
    }

    function showAnswer(turn, data, asked, knowledgeBaseIds) {
      var live = turn.querySelector(".live");
      if (live) live.remove();
      var urls = {};
      data.sources.forEach(function (source) {
        urls[source.id] = citedSourceUrl(source, data.claims);
      });
      if (data.refused) {
        var refusal = el("div", { class: "refusal", "data-testid": "refusal", role: "status" });
        refusal.appendChild(el("p", { class: "refusal-title" }, strings.refused));
        refusal.appendChild(el("p", {}, data.answer));
        turn.appendChild(refusal);
        showClosest(refusal, data, knowledgeBaseIds);
      } else {
        var head = el("div", { class: "answer-head" });
        head.appendChild(el("h3", {}, strings.answer));
        if (data.confidence) head.appendChild(confidenceBadge(data.confidence));
        turn.appendChild(head);
        turn.appendChild(answerText(data, urls));
        if (data.sources.length) {
          turn.appendChild(el("h3", {}, strings.sources));
          var list = el("ol", { class: "sources" });
          data.sources.forEach(function (source, index) {
            var item = el("li");
            item.appendChild(
              citationButton(sourceLabel(index + 1, source), urls[source.id], {
                class: "citation",
                "data-testid": "citation",
              })
            );
            if (source.heading_path && source.heading_path.length) {
              item.appendChild(el("span", { class: "muted" }, " " + source.heading_path.join(" › ")));
            }
            list.appendChild(item);
          });
          turn.appendChild(list);
        }
      }
      turn.appendChild(feedbackForm(data, asked, knowledgeBaseIds));
    }

    function refreshConversations() {
      fetch(root.getAttribute("data-conversations-url"), { credentials: "same-origin" })
        .then(function (response) {
          return response.ok ? response.text() : null;
        })
        .then(function (html) {
          if (html !== null) document.getElementById("conversation-list").innerHTML = html;
        })
        .catch(function () {});
    }

    function ask(asked, knowledgeBaseIds) {
      var turn = el("article", { class: "turn panel", "aria-busy": "true" });
      var line = el("p", { class: "question" });
      line.appendChild(el("span", { class: "muted" }, strings.you_asked + ": "));
      line.appendChild(document.createTextNode(asked));
      turn.appendChild(line);
      var live = el("div", { class: "live answer-text", "aria-live": "polite" });
      live.appendChild(el("p", { class: "muted" }, strings.asking));
      turn.appendChild(live);
      thread.appendChild(turn);

      var body = { question: asked, knowledge_base_ids: knowledgeBaseIds };
      if (conversation.value) body.conversation_id = conversation.value;
      var finished = false;
      submit.disabled = true;

      function handle(event) {
        if (event.name === "answer.delta") {
          if (live.firstChild && live.firstChild.classList.contains("muted")) live.textContent = "";
          live.appendChild(document.createTextNode(event.data.text));
        } else if (event.name === "run.completed") {
          finished = true;
          conversation.value = event.data.conversation_id;
          showAnswer(turn, event.data, asked, knowledgeBaseIds);
          refreshConversations();
        } else if (event.name === "run.failed") {
          finished = true;
          showError(turn, describe(0, event.data));
        }
      }

      return fetch(root.getAttribute("data-stream-url"), {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          Accept: "text/event-stream",
          "X-CSRFToken": Curator.csrfToken(),
        },
        body: JSON.stringify(body),
      })
        .then(function (response) {
          if (!response.ok) {
            finished = true;
            return response
              .json()
              .catch(function () {
                return {};
              })
              .then(function (error) {
                showError(turn, describe(response.status, error));
              });
          }
          var reader = response.body.getReader();
          var decoder = new TextDecoder();
          var buffer = "";
          function pump() {
            return reader.read().then(function (chunk) {
              if (chunk.done) {
                buffer += decoder.decode();
              } else {
                buffer += decoder.decode(chunk.value, { stream: true });
              }
              var blocks = buffer.split("\n\n");
              buffer = blocks.pop();
              blocks.forEach(function (block) {
                if (block.trim()) handle(parseEvent(block));
              });
              if (!chunk.done) return pump();
            });
          }
          return pump();
        })
        .catch(function () {
          if (!finished) {
            finished = true;
            showError(turn, strings.network);
          }
        })
        .then(function () {
          if (!finished) showError(turn, strings.cut_off);
          turn.removeAttribute("aria-busy");
          submit.disabled = false;
          status.textContent = "";
        });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var asked = question.value.trim();
      var knowledgeBaseIds = Array.prototype.map.call(
        form.querySelectorAll("[name=knowledge_base_ids]:checked"),
        function (box) {
          return box.value;
        }
      );
      if (!asked) {
        status.textContent = strings.empty_question;
        question.focus();
        return;
      }
      if (!knowledgeBaseIds.length) {
        status.textContent = strings.pick_kb;
        return;
      }
      status.textContent = strings.asking;
      question.value = "";
      ask(asked, knowledgeBaseIds).then(function () {
        question.focus();
      });
    });

    // Enter sends, Shift+Enter breaks the line (as chat boxes do).
    question.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
  });
})();
