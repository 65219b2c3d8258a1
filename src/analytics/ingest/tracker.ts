// The browser tracker served at GET /script.js (SPEC 4.1). Dependency-free, ES5, ~1.5 KB.
//
// Page snippet:
//   <script defer src="https://inkwell.example.com/script.js" data-project="prj_…" data-key="ink_pub_…"></script>
// Optional: data-api="https://other-origin.example.com" to post somewhere other than the script's origin.
//
// What it sends — POST {origin of script.js}/v1/collect, body as text/plain;charset=UTF-8 (a CORS-safelisted
// content type, so no preflight; navigator.sendBeacon, falling back to fetch with keepalive):
//   {"projectId":"prj_…","key":"ink_pub_…","events":[{"path":"/docs/intro","referrer":"https://www.google.com/"}]}
// - one event per page view: on load, and on SPA navigations (history.pushState / replaceState / popstate)
//   when location.pathname changed (replaceState with the same path does not count again);
// - path = location.pathname (never the query string or fragment);
// - referrer = document.referrer on the first view, the previous page's URL on SPA navigations; query and
//   fragment stripped; omitted when empty;
// - NO visitorId, no cookies, no localStorage: the server derives identity from HMAC(IP + User-Agent)
//   with the project's rotation setting, so the tracker stores nothing on the device (no consent banner
//   needed for the tracker itself).
// What the /v1/collect route must add: userAgent from the request's User-Agent header, ip from the client
// address; method and status absent (a page view). It must NOT use the beacon's Accept header (it is not the
// page's). The key must be an ingest key of that project.
//
// Nothing is sent when the tag lacks data-project or data-key, or for file: pages. Errors never surface.

export const TRACKER_JS = `/*! inkwell tracker */
(function (w, d) {
  'use strict';
  try {
    var s = d.currentScript || d.querySelector('script[data-key][data-project]');
    if (!s) return;
    var key = s.getAttribute('data-key');
    var project = s.getAttribute('data-project');
    if (!key || !project || w.location.protocol === 'file:') return;
    var api = s.getAttribute('data-api') || new URL(s.src, w.location.href).origin;
    var endpoint = api.replace(/\\/+$/, '') + '/v1/collect';
    var lastPath = null;
    var lastUrl = null;
    var strip = function (u) {
      if (!u) return '';
      try {
        var x = new URL(u);
        return x.origin + x.pathname;
      } catch (e) {
        return '';
      }
    };
    var post = function (body) {
      var n = w.navigator;
      try {
        if (n.sendBeacon && n.sendBeacon(endpoint, body)) return;
      } catch (e) {}
      try {
        if (w.fetch) w.fetch(endpoint, { method: 'POST', body: body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain;charset=UTF-8' } }).catch(function () {});
      } catch (e) {}
    };
    var view = function () {
      var path = w.location.pathname;
      if (path === lastPath) return;
      var ref = strip(lastUrl === null ? d.referrer : lastUrl);
      lastPath = path;
      lastUrl = w.location.href;
      var ev = { path: path };
      if (ref) ev.referrer = ref;
      post(JSON.stringify({ projectId: project, key: key, events: [ev] }));
    };
    var h = w.history;
    var wrap = function (name) {
      var orig = h && h[name];
      if (typeof orig !== 'function') return;
      h[name] = function () {
        var r = orig.apply(this, arguments);
        try {
          view();
        } catch (e) {}
        return r;
      };
    };
    wrap('pushState');
    wrap('replaceState');
    w.addEventListener('popstate', function () {
      try {
        view();
      } catch (e) {}
    });
    view();
  } catch (e) {}
})(window, document);
`;
