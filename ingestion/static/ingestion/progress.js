// Refreshes every `.task-progress` on an admin page once a second while any of
// them is queued, running or waiting to retry. No framework, no page reload.
(function () {
  "use strict";
  function active(elements) {
    return elements.filter(function (el) { return el.dataset.active === "true"; });
  }
  function update(el, task) {
    el.dataset.active = task.active ? "true" : "false";
    el.querySelector("progress").value = task.percent;
    el.querySelector("progress").title = task.percent + "%";
    el.querySelector(".task-status").textContent = task.status_text || task.status;
    el.querySelector(".task-stage").textContent =
      task.stage + " " + task.completed + "/" + task.total;
    if (task.error) { el.title = task.error; }
  }
  function poll() {
    var elements = Array.prototype.slice.call(
      document.querySelectorAll(".task-progress[data-task-id]"));
    var running = active(elements);
    if (!running.length) { return; }
    var url = running[0].dataset.progressUrl + "?ids=" +
      running.map(function (el) { return el.dataset.taskId; }).join(",");
    fetch(url, {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (response) { return response.ok ? response.json() : {tasks: []}; })
      .then(function (body) {
        body.tasks.forEach(function (task) {
          elements.forEach(function (el) {
            if (el.dataset.taskId === task.id) { update(el, task); }
          });
        });
      })
      .catch(function () {})
      .then(function () { window.setTimeout(poll, 1000); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    window.setTimeout(poll, 1000);
  });
})();
