package flagsnap

// DebugHandler: a read-only view of a provider over HTTP, mounted where the
// service wants it, as net/http/pprof is. This file routes the requests,
// reads their input and serves the JSON endpoints; debug_page.go builds
// the HTML page.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
)

// DebugHandler returns an HTTP handler that shows what p serves, for a
// person debugging a service: the state of the flag source and of its
// overrides, the flags in force with their usage (each flag an override
// defines marked with it), the keys asked for that no flag defines, and a
// form that evaluates a flag for a context and explains the answer. It
// serves, below where it is mounted:
//
//   - / : that page, in HTML. Its table of flags is filtered and sorted
//     through the query (?q=part-of-key&sort=key|evaluations|errors) and
//     shows at most 500 rows; an evaluation is a GET
//     (?flag=KEY&context=JSON), so that its address can be shared.
//   - /status : [Provider.SourceStatus] as JSON.
//   - /usage : [Provider.Usage] as JSON.
//   - /flags : the flag document in force, as the source delivered it
//     (JSON, or YAML from a YAML file). With overrides in force, it is
//     JSON instead: each flag in force with its definition as the layer
//     that defines it wrote it, and "layer", the override's name, for a
//     flag an override defines; then /flags?layer=N is the document of
//     layer N, as delivered (0: the source's, 1 and on: the overrides',
//     lowest first). The provider keeps the source's document
//     compressed, whenever the handler is made.
//   - /evaluate?flag=KEY&context=JSON : the evaluation of KEY for the
//     flattened evaluation context (a JSON object; the targeting key is
//     "targetingKey"), with the provider's enrichment, and the explanation
//     of the path its rule took, as JSON.
//
// The evaluations it makes are not counted in Usage. It changes nothing:
// it answers GET and HEAD only, and reads at most 64 KiB of query with a
// context nested at most 32 levels deep. Its page holds no script and
// loads nothing from elsewhere; it sends a Content-Security-Policy that
// allows its own style sheet only, and Cache-Control: no-store.
//
// Mount it behind the service's own access control, as net/http/pprof:
// it shows every flag's variants and rules, which may name customers, and
// anyone who reaches it may evaluate any flag for any context.
//
//	mux.Handle("/debug/flags/", http.StripPrefix("/debug/flags", flagsnap.DebugHandler(p)))
func DebugHandler(p *Provider) http.Handler {
	return &debugHandler{p: p}
}

type debugHandler struct{ p *Provider }

const (
	// maxDebugQuery bounds the query a request may carry: a context is a
	// person's test input, not a payload.
	maxDebugQuery = 64 << 10
	// maxContextDepth bounds how deep a context's objects and arrays nest.
	maxContextDepth = 32
)

// debugHeaders are sent with every answer. The policy lets the page apply
// its own style sheet (by hash) and submit its forms to itself, and
// nothing else: no script, no other origin, no frame around it.
var debugHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src '" + debugStyleHash + "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Cache-Control":           "no-store",
	// The page's address may hold a context, which is nobody else's
	// business.
	"Referrer-Policy": "no-referrer",
}

func (h *debugHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range debugHeaders {
		w.Header().Set(k, v)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "flagsnap debug: only GET and HEAD: this handler changes nothing", http.StatusMethodNotAllowed)
		return
	}
	if n := len(r.URL.RawQuery); n > maxDebugQuery {
		http.Error(w, fmt.Sprintf("flagsnap debug: the query is %d bytes, over the limit of %d", n, maxDebugQuery), http.StatusBadRequest)
		return
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "flagsnap debug: the query is not URL-encoded: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "":
		redirectToPage(w, r)
	case "/":
		h.servePage(w, query)
	case "/status":
		writeDebugJSON(w, http.StatusOK, h.p.SourceStatus())
	case "/usage":
		writeDebugJSON(w, http.StatusOK, h.p.Usage())
	case "/flags":
		h.serveFlags(w, query)
	case "/evaluate":
		h.serveEvaluate(w, query)
	default:
		http.Error(w, "flagsnap debug: no such page; there are /, /status, /usage, /flags and /evaluate", http.StatusNotFound)
	}
}

// redirectToPage sends a request for the mount point without its slash
// (/debug/flags, which http.StripPrefix turns into "") to the page, so
// that the page's relative links resolve below the mount point. The
// location is relative, as the handler does not know where it is mounted.
func redirectToPage(w http.ResponseWriter, r *http.Request) {
	to := path.Base(r.URL.EscapedPath())
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		to = path.Base(u.EscapedPath())
	}
	if to == "/" || to == "." {
		to = "."
	}
	to += "/"
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusMovedPermanently)
}

// debugError is the body of a JSON endpoint's refusal.
type debugError struct {
	Error string `json:"error"`
}

// serveEvaluate writes the evaluation that the query asks for as JSON.
func (h *debugHandler) serveEvaluate(w http.ResponseWriter, query url.Values) {
	key := query.Get("flag")
	if key == "" {
		writeDebugJSON(w, http.StatusBadRequest, debugError{Error: "flag is missing: /evaluate?flag=KEY&context=JSON"})
		return
	}
	ctx, err := debugContext(query.Get("context"))
	if err != nil {
		writeDebugJSON(w, http.StatusBadRequest, debugError{Error: err.Error()})
		return
	}
	writeDebugJSON(w, http.StatusOK, h.evaluate(key, ctx))
}

// debugResult is an evaluation as the debug handler shows it: the details
// OpenFeature would hand the caller, and the explanation of the rule.
type debugResult struct {
	Flag string `json:"flag"`
	// Value is the variant's value, null when the caller's default
	// applies.
	Value        any            `json:"value"`
	Variant      string         `json:"variant,omitempty"`
	Reason       string         `json:"reason"`
	ErrorCode    string         `json:"errorCode,omitempty"`
	ErrorMessage string         `json:"errorMessage,omitempty"`
	FlagMetadata map[string]any `json:"flagMetadata,omitempty"`
	// Explanation is the path the rule took, and ExplanationText it as
	// flagsnap eval --explain prints it; both absent before the first
	// flag set.
	Explanation     *evaluator.Explanation `json:"explanation,omitempty"`
	ExplanationText string                 `json:"explanationText,omitempty"`
}

// evaluate evaluates key for ctx in the flag set in force, enrichment
// included, as the provider does, but through Explain, which records the
// rule's path and counts nothing: a person's test is not the service's use.
func (h *debugHandler) evaluate(key string, ctx map[string]any) debugResult {
	set := h.p.flags()
	if set == nil {
		return debugResult{Flag: key, Reason: string(notReady.Reason), ErrorCode: string(openfeature.ProviderNotReadyCode), ErrorMessage: "no flags have been loaded yet"}
	}
	// The error, a missing flag, is the explanation's Err too.
	x, _ := set.Explain(key, ctx)
	res := debugResult{Flag: key, Value: x.Value, Variant: x.Variant, Reason: x.Reason.String(), FlagMetadata: x.Metadata,
		Explanation: &x, ExplanationText: x.String()}
	if x.Err != nil {
		res.ErrorCode, res.ErrorMessage = x.Err.Code.String(), x.Err.Error()
	}
	return res
}

// debugContext reads an evaluation context given as JSON: an object, or
// nothing for an empty context. Numbers stay json.Number, which the
// evaluator takes at their exact value, as the flagsnap command does.
func debugContext(text string) (map[string]any, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]any{}, nil
	}
	if d := jsonDepth(text); d > maxContextDepth {
		return nil, fmt.Errorf("the context nests %d levels deep, over the limit of %d", d, maxContextDepth)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var ctx map[string]any
	if err := dec.Decode(&ctx); err != nil {
		return nil, fmt.Errorf("the context is not a JSON object: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("the context is not a JSON object: data after the object")
	}
	if ctx == nil {
		return nil, errors.New("the context is not a JSON object: null")
	}
	return ctx, nil
}

// jsonDepth is how deep the objects and arrays of a JSON text nest, read
// before decoding it so that a deep text costs no more than a scan. Text
// that is not JSON gets some count; the decoder rejects it next.
func jsonDepth(text string) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// writeDebugJSON writes v as indented JSON, for a person reading it as
// much as for a program.
func writeDebugJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, "flagsnap debug: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
