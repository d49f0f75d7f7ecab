package validate

import (
	"path"
	"strings"
)

// mediaType returns the type/subtype of a Content-Type value, lower-cased, without
// parameters (such as "; charset=utf-8") or surrounding space.
func mediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// javaScriptTypes are the media types accepted for JavaScript: RFC 9239 makes
// text/javascript the one to use and application/javascript obsolete but still seen (the
// arena's validate.sh treated them as equal).
var javaScriptTypes = []string{"text/javascript", "application/javascript"}

// typeMatches reports whether the Content-Type value got names the media type want,
// ignoring parameters and case, with the JavaScript types equal to each other.
func typeMatches(got, want string) bool {
	g, w := mediaType(got), mediaType(want)
	if g == "" || w == "" {
		return false
	}
	if g == w {
		return true
	}
	isJS := func(t string) bool { return t == javaScriptTypes[0] || t == javaScriptTypes[1] }
	return isJS(g) && isJS(w)
}

// staticTypes are the media types of the static files, by extension.
var staticTypes = map[string]string{
	".css":   "text/css",
	".js":    "text/javascript",
	".json":  "application/json",
	".html":  "text/html",
	".svg":   "image/svg+xml",
	".woff2": "font/woff2",
	".webp":  "image/webp",
}

// staticType returns the media type a static file must be served with, or "" when the
// contract names none for its extension.
func staticType(name string) string { return staticTypes[strings.ToLower(path.Ext(name))] }
