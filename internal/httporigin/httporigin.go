// Package httporigin is an HTTP server of one flag document, for the
// tests of what polls one (the URL source, the provider, flagsnap serve):
// what it answers is the test's to set, and it keeps the requests it was
// sent.
package httporigin

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Answer is what the origin answers every request with.
type Answer struct {
	Doc          string
	ETag         string // sent, and answered with 304 on If-None-Match; "" for none
	LastModified string // sent, and answered with 304 on If-Modified-Since; "" for none
	Status       int    // when not 0, a failure with this status instead of Doc
	RetryAfter   string // sent with a failure
	Delay        time.Duration
}

// Document answers doc with an ETag of its content.
func Document(doc string) Answer {
	return Answer{Doc: doc, ETag: fmt.Sprintf(`"%x"`, sha256.Sum256([]byte(doc)))}
}

// Failing answers every request with status.
func Failing(status int) Answer { return Answer{Status: status} }

// Origin is the server's handler.
type Origin struct {
	mu       sync.Mutex
	answer   Answer
	requests []*http.Request
}

// New returns an origin that answers a.
func New(a Answer) *Origin { return &Origin{answer: a} }

// Set makes the origin answer a from now on.
func (o *Origin) Set(a Answer) { o.Update(func(cur *Answer) { *cur = a }) }

// Update changes what the origin answers.
func (o *Origin) Update(f func(*Answer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(&o.answer)
}

// Requests are the requests the origin was sent, in order.
func (o *Origin) Requests() []*http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*http.Request(nil), o.requests...)
}

func (o *Origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.requests = append(o.requests, r.Clone(context.Background()))
	a := o.answer
	o.mu.Unlock()
	if a.Delay > 0 {
		select {
		case <-time.After(a.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if a.Status != 0 {
		if a.RetryAfter != "" {
			w.Header().Set("Retry-After", a.RetryAfter)
		}
		http.Error(w, "failing on purpose", a.Status)
		return
	}
	if a.ETag != "" {
		w.Header().Set("ETag", a.ETag)
	}
	if a.LastModified != "" {
		w.Header().Set("Last-Modified", a.LastModified)
	}
	if (a.ETag != "" && r.Header.Get("If-None-Match") == a.ETag) ||
		(a.LastModified != "" && r.Header.Get("If-Modified-Since") == a.LastModified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	fmt.Fprint(w, a.Doc)
}
