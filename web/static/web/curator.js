// Curator's pages: behaviour that htmx attributes do not cover. No inline
// script anywhere (the content security policy forbids it): pages mark elements
// with data-* attributes and this file wires them up.
(function () {
  "use strict";

  function csrfToken() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    if (match) return decodeURIComponent(match[1]);
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // A select that submits its form when changed (the language switch); the
  // form keeps a submit button for keyboards and browsers without scripts.
  function autosubmit(root) {
    root.querySelectorAll("form[data-autosubmit] select").forEach(function (select) {
      select.addEventListener("change", function () {
        select.form.requestSubmit();
      });
    });
  }

  // A page module registers itself: Curator.on("ask", function (root) {...}).
  var modules = {};
  window.Curator = {
    csrfToken: csrfToken,
    on: function (name, setup) {
      modules[name] = setup;
    },
  };

  document.addEventListener("DOMContentLoaded", function () {
    autosubmit(document);
    document.querySelectorAll("[data-module]").forEach(function (element) {
      var setup = modules[element.getAttribute("data-module")];
      if (setup) setup(element);
    });
  });
})();
