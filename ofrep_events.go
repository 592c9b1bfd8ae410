package flagsnap

// OFREP's event stream (ADR 0008): server-sent events that tell a client
// to fetch its flags again when they change.

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// streamWriteTimeout bounds each write to an event stream: a client that
// stops reading is dropped, while the stream itself has no end.
const streamWriteTimeout = 30 * time.Second

// eventID names a snapshot of the flags in the event stream: the
// provider's instance and the snapshot's version, so that an id from
// another process (before a restart) never matches.
func (p *Provider) eventID(in *inForce) string {
	return p.instance + "-" + strconv.FormatUint(in.version, 10)
}

// events answers GET .../v1/events: a stream that stays open until the
// client leaves or the provider shuts down, with one refetchEvaluation
// event per change of the flags and a comment line every heartbeat. A
// client back with a Last-Event-ID other than the current one gets an
// event at once: it missed a change.
func (h *ofrepHandler) events(w http.ResponseWriter, r *http.Request) {
	if !h.p.running() || h.p.snap.Load() == nil {
		answerNotReady(w, "")
		return
	}
	if n := h.streams.Add(1); n > int64(h.cfg.maxStreams) {
		h.streams.Add(-1)
		w.Header().Set("Retry-After", "30")
		writeOFREPError(w, http.StatusServiceUnavailable, ofrepFailure{code: "GENERAL",
			details: fmt.Sprintf("%d event streams are open, the most this server keeps (WithOFREPMaxStreams): poll instead", h.cfg.maxStreams)})
		return
	}
	defer h.streams.Add(-1)

	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	w.WriteHeader(http.StatusOK)

	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		// The client has just fetched its flags: the snapshot it saw
		// is the current one, or else one whose change is on its way.
		last = h.p.eventID(h.p.snap.Load())
	}
	heartbeat := time.NewTicker(h.cfg.heartbeat)
	defer heartbeat.Stop()
	send := []byte(": flagsnap OFREP events\n\n")
	for {
		// Wait on the signal before looking, so that no change falls
		// between the look and the wait.
		changed := h.p.changed.wait()
		if !h.p.running() {
			return
		}
		if in := h.p.snap.Load(); in != nil {
			if id := h.p.eventID(in); id != last {
				send = appendEvent(send, id)
				last = id
			}
		}
		if len(send) > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			if _, err := w.Write(send); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			send = send[:0]
		}
		select {
		case <-changed:
		case <-heartbeat.C:
			send = append(send, ": heartbeat\n\n"...)
		case <-r.Context().Done():
			return
		}
	}
}

// appendEvent appends the refetchEvaluation event of the snapshot id.
func appendEvent(b []byte, id string) []byte {
	b = append(b, "id: "...)
	b = append(b, id...)
	b = append(b, "\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":"...)
	b = appendJSONString(b, id)
	return append(b, "}\n\n"...)
}
