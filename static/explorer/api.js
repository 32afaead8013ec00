/* The REST API under /api/v1/contexts/<slug>/, with the session cookie and CSRF header. */

const pageData = JSON.parse(document.getElementById("page-data").textContent);
export const page = Object.freeze(pageData);

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || "request failed with HTTP " + status);
    this.status = status;
    this.code = error.code || "http_" + status;
    this.details = Array.isArray(error.details) ? error.details : [];
  }
}

export async function api(path, options) {
  const opts = Object.assign({ credentials: "same-origin", headers: {} }, options || {});
  opts.headers = Object.assign({ Accept: "application/json" }, opts.headers);
  if (opts.body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.headers["X-CSRFToken"] = csrfToken();
    opts.body = JSON.stringify(opts.body);
  }
  let response;
  try {
    response = await fetch(page.api + path, opts);
  } catch (err) {
    throw new ApiError(0, { error: { code: "network", message: "the server did not answer" } });
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/* Every page of a cursor-paged list. */
export async function fetchAll(path, key) {
  const items = [];
  let cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const data = await api(path + (cursor ? sep + "cursor=" + encodeURIComponent(cursor) : ""));
    items.push(...(data[key] || []));
    cursor = data.next_cursor;
  } while (cursor);
  return items;
}
