package flagsnap

// What an OFREP request asks: its evaluation context, read within bounds,
// and the flag sets it may see.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// ofrepFailure is an answer that is not an evaluation: OFREP's
// errorCode and errorDetails, and the flag's key when there is one.
type ofrepFailure struct {
	key, code, details string
}

// writeOFREPError answers f as JSON with status.
func writeOFREPError(w http.ResponseWriter, status int, f ofrepFailure) {
	b := []byte{'{'}
	if f.key != "" {
		b = append(b, `"key":`...)
		b = appendJSONString(b, f.key)
		b = append(b, ',')
	}
	b = append(b, `"errorCode":`...)
	b = appendJSONString(b, f.code)
	b = append(b, `,"errorDetails":`...)
	b = appendJSONString(b, f.details)
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// errRequest is a request the handler cannot evaluate, with its status.
type errRequest struct {
	status  int
	failure ofrepFailure
}

func badContext(format string, args ...any) *errRequest {
	return &errRequest{http.StatusBadRequest, ofrepFailure{code: "INVALID_CONTEXT", details: fmt.Sprintf(format, args...)}}
}

// read reads what an evaluation request asks: the flag sets it may see
// and its evaluation context.
func (h *ofrepHandler) read(w http.ResponseWriter, r *http.Request) (sets []string, ctx map[string]any, bad *errRequest) {
	if sets, bad = h.flagSets(r); bad != nil {
		return nil, nil, bad
	}
	ctx, bad = h.context(w, r)
	return sets, ctx, bad
}

// context reads the evaluation context of r: its body's "context" (an
// object; none is an empty context), then the static values over it, then
// the attributes of the mapped headers over those, in flagd's order.
func (h *ofrepHandler) context(w http.ResponseWriter, r *http.Request) (map[string]any, *errRequest) {
	buf := ofrepBuffers.Get().(*[]byte)
	defer ofrepBuffers.Put(buf)
	body := bytes.NewBuffer((*buf)[:0])
	_, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, h.cfg.maxBody))
	*buf = body.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &errRequest{http.StatusRequestEntityTooLarge, ofrepFailure{code: "INVALID_CONTEXT",
				details: fmt.Sprintf("the request body is over %d bytes", h.cfg.maxBody)}}
		}
		return nil, badContext("reading the request body: %v", err)
	}
	ctx, bad := parseContext(body.Bytes())
	if bad != nil {
		return nil, bad
	}
	if len(h.cfg.fromHeaders) > 0 || len(h.cfg.static) > 0 {
		if ctx == nil {
			ctx = map[string]any{}
		}
		maps.Copy(ctx, h.cfg.static)
		for _, m := range h.cfg.fromHeaders {
			if v := r.Header.Get(m.header); v != "" {
				ctx[m.attribute] = v
			}
		}
	}
	return ctx, nil
}

// parseContext reads an OFREP request body, {"context": {...}}. An empty
// body, or one without a context, is an empty context.
func parseContext(body []byte) (map[string]any, *errRequest) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if d := jsonDepth(string(body)); d > maxContextDepth {
		return nil, badContext("the request nests %d levels deep, over the limit of %d", d, maxContextDepth)
	}
	var req struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field == "context" {
			return nil, badContext("context must be a JSON object of attributes, not %s", typeErr.Value)
		}
		return nil, badContext("the request body is not a JSON object {\"context\": {...}}: %v", err)
	}
	ctx := req.Context
	if tk, ok := ctx["targetingKey"]; ok {
		if _, isString := tk.(string); !isString {
			return nil, badContext("targetingKey must be a string, not %s", jsonKind(tk))
		}
	}
	return ctx, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// flagSets is the flag sets r may see: nil for every flag, else the
// handler's (WithOFREPFlagSets), or the one of those that its
// Flagd-Selector header names.
func (h *ofrepHandler) flagSets(r *http.Request) ([]string, *errRequest) {
	sel := strings.TrimSpace(r.Header.Get("Flagd-Selector"))
	if sel == "" {
		return h.cfg.flagSets, nil
	}
	id, ok := strings.CutPrefix(sel, "flagSetId=")
	if !ok {
		return nil, &errRequest{http.StatusBadRequest, ofrepFailure{code: "GENERAL",
			details: fmt.Sprintf("Flagd-Selector %q: only flagSetId=ID selects flags here", sel)}}
	}
	if h.cfg.flagSets != nil && !slices.Contains(h.cfg.flagSets, id) {
		return nil, &errRequest{http.StatusForbidden, ofrepFailure{code: "GENERAL",
			details: fmt.Sprintf("Flagd-Selector: flag set %q is not served here", id)}}
	}
	return []string{id}, nil
}
