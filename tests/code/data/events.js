const { format } = require("./format");

/**
 * A tiny event emitter.
 */
class Emitter {
  constructor() {
    this.listeners = {};
  }

  on(name, fn) {
    (this.listeners[name] ||= []).push(fn);
  }

  emit(name, ...args) {
    for (const fn of this.listeners[name] || []) fn(...args);
  }
}

function* ids() {
  let n = 0;
  while (true) yield n++;
}

const debounce = function (fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
};

module.exports = { Emitter, ids, debounce, format };
