package flagsnap

// OFREP's two evaluation endpoints.

import (
	"net/http"
	"slices"
)

var noStore = []string{"no-store"}

// answerNotReady answers a request that came before the first flag set.
func answerNotReady(w http.ResponseWriter, key string) {
	w.Header().Set("Retry-After", "1")
	writeOFREPError(w, http.StatusServiceUnavailable, ofrepFailure{key: key, code: "PROVIDER_NOT_READY", details: ErrNotReady.Error()})
}

// evaluateOne answers POST .../v1/evaluate/flags/{key}: 200 with the
// flag's answer, 404 for a flag it does not have (or may not show), 400
// for a flag that failed.
func (h *ofrepHandler) evaluateOne(w http.ResponseWriter, r *http.Request, key string) {
	sets, ctx, bad := h.read(w, r)
	if bad != nil {
		bad.failure.key = key
		writeOFREPError(w, bad.status, bad.failure)
		return
	}
	v := h.currentView()
	if v == nil {
		answerNotReady(w, key)
		return
	}
	e := v.in.set.Evaluate(key, ctx)
	// A flag of a set this request may not see is one it cannot tell from
	// a flag that does not exist; it is not counted as read.
	i := e.Index()
	hidden := i >= 0 && sets != nil && !slices.Contains(sets, v.flag(int32(i)).setID)
	if !hidden {
		v.in.count(key, &e)
	}
	if i < 0 || hidden {
		notFound := e.Err() // the set's NotFound(key) when i < 0
		if hidden {
			notFound = v.in.set.NotFound(key)
		}
		writeOFREPError(w, http.StatusNotFound, ofrepFailure{key: key, code: "FLAG_NOT_FOUND", details: notFound.Error()})
		return
	}
	var f FlagEvaluation
	v.in.fillEvaluation(&f, &e)
	status := http.StatusOK
	if f.ErrorCode != "" {
		status = http.StatusBadRequest
	}
	buf := ofrepBuffers.Get().(*[]byte)
	b := append(v.appendFlag((*buf)[:0], &f), '\n')
	w.Header()["Cache-Control"] = noStore
	writeJSON(w, status, b)
	*buf = b
	ofrepBuffers.Put(buf)
}

// evaluateAll answers POST .../v1/evaluate/flags: every flag the request
// may see, the flag set's metadata and the event stream, with an ETag
// that is a hash of the answer, or 304 when If-None-Match names it.
func (h *ofrepHandler) evaluateAll(w http.ResponseWriter, r *http.Request, prefix string) {
	sets, ctx, bad := h.read(w, r)
	if bad != nil {
		writeOFREPError(w, bad.status, bad.failure)
		return
	}
	v := h.currentView()
	if v == nil {
		answerNotReady(w, "")
		return
	}
	all := ofrepResults.Get().(*AllFlags)
	v.in.evaluateAll(all, v.indexes(sets), ctx)
	buf := ofrepBuffers.Get().(*[]byte)
	b := append((*buf)[:0], `{"flags":[`...)
	for n := range all.Flags {
		if n > 0 {
			b = append(b, ',')
		}
		b = v.appendFlag(b, &all.Flags[n])
	}
	b = append(b, `],"metadata":`...)
	b = append(b, v.meta...)
	b = append(b, `,"eventStreams":[{"type":"sse","endpoint":{"requestUri":`...)
	b = appendJSONString(b, prefix+ofrepEventsPath)
	b = append(b, `},"inactivityDelaySec":120}]}`+"\n"...)
	// Drop what the pool would keep alive: the flags' values and metadata,
	// and the flag set itself, which an update may have replaced.
	clear(all.Flags)
	all.Metadata, all.in = nil, nil
	ofrepResults.Put(all)

	tag := bodyTag(b)
	hd := w.Header()
	hd.Set("ETag", tag)
	hd.Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, tag) {
		w.WriteHeader(http.StatusNotModified)
	} else {
		writeJSON(w, http.StatusOK, b)
	}
	*buf = b
	ofrepBuffers.Put(buf)
}
