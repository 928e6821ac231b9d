/*
 * iframe-worker shim, vendored so the site opened from disk (file://) needs no CDN.
 * MkDocs-Material's offline plugin adds https://unpkg.com/iframe-worker/shim unless a
 * polyfill whose URL names "iframe-worker" is configured; this is that polyfill.
 *
 * Transcribed to plain JavaScript from squidfunk/iframe-worker @579bf107e5ff
 * (src/shim/index.ts, src/worker/index.ts, src/worker/runtime/index.ts).
 *
 * Copyright (c) 2020-2022 Martin Donath <martin.donath@squidfunk.com>
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to
 * deal in the Software without restriction, including without limitation the
 * rights to use, copy, modify, merge, publish, distribute, sublicense, and/or
 * sell copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NON-INFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
 * FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
 * IN THE SOFTWARE.
 */
(function () {
  "use strict";

  /* Runtime functions, written into the iframe as source text. */
  function postMessage(message, origin) {
    parent.postMessage(message, origin || "*");
  }

  function importScripts() {
    var urls = Array.prototype.slice.call(arguments);
    return urls.reduce(function (promise, url) {
      return promise.then(function () {
        return new Promise(function (resolve) {
          var script = document.createElement("script");
          script.src = url;
          script.onload = resolve;
          document.body.appendChild(script);
        });
      });
    }, Promise.resolve());
  }

  /* A tiny, mostly spec-compliant Worker on top of a hidden iframe. */
  class IFrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.url = url;
      this.onerror = null;
      this.onmessage = null;
      this.onmessageerror = null;
      var self = this;
      this.m = function (ev) {
        if (ev.source === self.w) {
          self.dispatchEvent(new MessageEvent("message", { data: ev.data }));
          if (self.onmessage) self.onmessage(ev);
        }
      };
      this.e = function (message, filename, lineno, colno, error) {
        if (filename === "" + self.url) {
          var ev = new ErrorEvent("error", {
            message: message, filename: filename, lineno: lineno, colno: colno, error: error
          });
          self.dispatchEvent(ev);
          if (self.onerror) self.onerror(ev);
        }
      };

      var iframe = document.createElement("iframe");
      iframe.hidden = true;
      document.body.appendChild((this.iframe = iframe));

      this.w.document.open();
      this.w.document.write(
        "<html>" +
          "<body>" +
            "<script>" +
              "postMessage=" + postMessage + ";" +
              "importScripts=" + importScripts + ";" +
              'addEventListener("error",({error})=>{' +
                'parent.dispatchEvent(new ErrorEvent("error",{' +
                  'filename:"' + url + '",' +
                  "error" +
                "}))" +
              "})" +
            "</script>" +
            "<script src=" + url + "?" + +Date.now() + "></script>" +
          "</body>" +
        "</html>"
      );
      this.w.document.close();

      onmessage = this.m;
      onerror = this.e;
      this.r = new Promise(function (resolve, reject) {
        self.w.onload = resolve;
        self.w.onerror = reject;
      });
    }

    terminate() {
      this.iframe.remove();
      onmessage = onerror = null;
    }

    postMessage(data) {
      var self = this;
      void this.r.catch().then(function () {
        self.w.dispatchEvent(new MessageEvent("message", structuredClone({ data: data })));
      });
    }

    get w() {
      return this.iframe.contentWindow;
    }
  }

  window.IFrameWorker = IFrameWorker;
  if (location.protocol === "file:") window.Worker = IFrameWorker;
})();
