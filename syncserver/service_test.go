package syncserver

import (
	"context"
	"slices"
	"strconv"
	"testing"
)

// A stream that is not read must not queue every set it missed: only the
// latest set between two raw payloads is kept, and every raw payload is.
func TestEnqueueReplacesUnsentSets(t *testing.T) {
	sub := &subscriber{wake: make(chan struct{}, 1)}
	for _, m := range []message{
		{resp: &response{payload: "set1"}},
		{resp: &response{payload: "set2"}},
		{resp: &response{payload: "raw1"}, raw: true},
		{resp: &response{payload: "raw2"}, raw: true},
		{resp: &response{payload: "set3"}},
		{resp: &response{payload: "set4"}},
	} {
		sub.enqueue(m)
	}
	var got []string
	for _, m := range sub.queue {
		got = append(got, m.resp.payload)
	}
	if want := []string{"set2", "raw1", "raw2", "set4"}; !slices.Equal(got, want) {
		t.Errorf("queue = %q, want %q", got, want)
	}
	if len(sub.wake) != 1 {
		t.Errorf("%d wake-ups pending, want 1", len(sub.wake))
	}
}

// A server that runs for long remembers its most recent calls, not all.
func TestRequestsAreBounded(t *testing.T) {
	s := newServer(t)
	svc := &service{s: s}
	for i := range maxRequests + 1 {
		svc.recordRequest(context.Background(), "GetMetadata", strconv.Itoa(i), "")
	}
	got := s.Requests()
	if len(got) != maxRequests/2+1 {
		t.Fatalf("%d requests kept, want %d", len(got), maxRequests/2+1)
	}
	if first, last := got[0].ProviderID, got[len(got)-1].ProviderID; first != strconv.Itoa(maxRequests/2) || last != strconv.Itoa(maxRequests) {
		t.Errorf("kept calls %s to %s, want the most recent", first, last)
	}
}
