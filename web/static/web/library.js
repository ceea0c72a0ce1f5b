// The library page: drag-and-drop and chosen files are uploaded one after
// another to the API (POST /api/documents), each with its own progress bar and,
// when refused, the API's error_code and detail beside it. A finished upload
// asks htmx to fetch the document list again ("library-changed").
(function () {
  "use strict";

  var EMPTY_ID = "00000000-0000-0000-0000-000000000000";

  Curator.on("library", function (root) {
    var uploads = root.querySelector("[data-uploads]");
    var dropzone = root.querySelector("[data-dropzone]");
    var submitAfter = root.querySelector("[data-submit-after]");
    var maxBytes = parseInt(root.getAttribute("data-max-bytes"), 10);
    var texts = {};
    root.querySelectorAll("[data-texts] [data-key]").forEach(function (item) {
      texts[item.getAttribute("data-key")] = item.textContent;
    });
    var queue = Promise.resolve();

    function entryFor(file) {
      var item = document.createElement("li");
      var name = document.createElement("span");
      name.className = "name";
      name.textContent = file.name;
      var bar = document.createElement("progress");
      bar.max = 100;
      bar.value = 0;
      bar.setAttribute("aria-label", texts.progress + ": " + file.name);
      var status = document.createElement("span");
      status.className = "status";
      status.textContent = texts.waiting;
      item.append(name, bar, status);
      uploads.append(item);
      return { item: item, bar: bar, status: status };
    }

    function showError(entry, code, detail, prefix) {
      entry.item.classList.add("failed");
      entry.bar.hidden = true;
      entry.status.textContent = "";
      var sentence = document.createElement("span");
      sentence.className = "error-text";
      sentence.textContent = (prefix ? prefix + " " : "") + (texts[code] || texts.other);
      var codeElement = document.createElement("code");
      codeElement.textContent = code;
      entry.status.append(sentence, " ", codeElement);
      if (detail) {
        var more = document.createElement("span");
        more.className = "muted detail";
        more.textContent = detail;
        entry.status.append(" ", more);
      }
    }

    function parse(text) {
      try {
        return JSON.parse(text) || {};
      } catch (error) {
        return {};
      }
    }

    function post(url, body, onProgress) {
      return new Promise(function (resolve) {
        var request = new XMLHttpRequest();
        request.open("POST", url);
        request.setRequestHeader("X-CSRFToken", Curator.csrfToken());
        request.setRequestHeader("Accept", "application/json");
        if (onProgress) request.upload.onprogress = onProgress;
        request.onload = function () {
          resolve({ status: request.status, body: parse(request.responseText) });
        };
        request.onerror = function () {
          resolve({ status: 0, body: { error_code: "network_error" } });
        };
        request.send(body);
      });
    }

    function refusal(response) {
      return {
        code: response.body.error_code || "http_" + response.status,
        detail: response.body.detail || "",
      };
    }

    // Shows the file at once; returns the function that sends it, or null.
    function upload(file, familyId) {
      var entry = entryFor(file);
      if (file.size > maxBytes) {
        showError(entry, "file_too_large", "");
        return null;
      }
      var form = new FormData();
      form.append("file", file);
      if (familyId) form.append("document_family_id", familyId);
      return function () {
        return post(root.getAttribute("data-upload-url"), form, function (event) {
          if (!event.lengthComputable) return;
          entry.bar.value = Math.round((100 * event.loaded) / event.total);
          entry.status.textContent = texts.uploading + " " + entry.bar.value + "%";
        }).then(function (response) {
          if (response.status !== 201) {
            var why = refusal(response);
            showError(entry, why.code, why.detail);
            return;
          }
          entry.bar.value = 100;
          if (!submitAfter.checked) {
            entry.status.textContent = texts.uploaded;
            return;
          }
          var url = root
            .getAttribute("data-submit-url")
            .replace(EMPTY_ID, response.body.document_id);
          return post(url, null).then(function (submitted) {
            if (submitted.status === 202) {
              entry.status.textContent = texts.submitted;
            } else {
              var why = refusal(submitted);
              showError(entry, why.code, why.detail, texts.not_submitted);
            }
          });
        }).then(function () {
          entry.item.classList.add("done");
          document.body.dispatchEvent(new CustomEvent("library-changed"));
        });
      };
    }

    function start(files, familyId) {
      Array.prototype.forEach.call(files, function (file) {
        var send = upload(file, familyId);
        // One at a time: each file keeps the whole connection for its bar.
        if (send) queue = queue.then(send);
      });
    }

    root.addEventListener("change", function (event) {
      var input = event.target;
      if (!input.matches("input[data-upload-input]") || !input.files.length) return;
      var files = Array.prototype.slice.call(input.files);
      input.value = "";
      start(files, input.getAttribute("data-family-id"));
    });

    ["dragenter", "dragover"].forEach(function (name) {
      dropzone.addEventListener(name, function (event) {
        event.preventDefault();
        dropzone.classList.add("over");
      });
    });
    ["dragleave", "drop"].forEach(function (name) {
      dropzone.addEventListener(name, function () {
        dropzone.classList.remove("over");
      });
    });
    dropzone.addEventListener("drop", function (event) {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length) {
        start(event.dataTransfer.files, null);
      }
    });
  });
})();
