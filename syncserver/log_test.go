package syncserver

import (
	"regexp"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/logtest"
)

// Each stream that opens is logged at INFO with its follower, and so is
// the first flag set sent on it; later sets are not.
func TestStreamsAreLogged(t *testing.T) {
	var logs logtest.Buffer
	s := startTCP(t, WithFlags([]byte(flagsA)), WithSelectorFlags("app=b", []byte(flagsB)), WithLogger(logs.Logger()))
	c := plain(t, s)
	tests := []struct {
		providerID, selector, header string
		want                         string // the attributes after the message
	}{
		{"checkout", "", "", `providerId=checkout selector=""`},
		{"", "app=b", "", `providerId="" selector="app=b"`},
		{"p", "field", "app=b", `providerId=p selector="app=b"`}, // the header wins
	}
	for _, tt := range tests {
		before := logs.Count(`msg="first flag set sent"`)
		recv(t, openStream(t, c, tt.providerID, tt.selector, tt.header))
		deadline := time.Now().Add(wait)
		for logs.Count(`msg="first flag set sent"`) == before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		for line, after := range map[string]string{`"stream opened"`: ``, `"first flag set sent"`: ` bytes=[1-9]\d*`} {
			re := regexp.MustCompile(`level=INFO msg=` + line + ` follower=127\.0\.0\.1:\d+ ` + regexp.QuoteMeta(tt.want) + after + `\n`)
			if n := len(re.FindAllString(logs.String(), -1)); n != 1 {
				t.Errorf("%s: %d lines %s, want 1:\n%s", tt.want, n, line, logs.String())
			}
		}
	}
	s.SetFlags([]byte(flagsC))
	time.Sleep(50 * time.Millisecond)
	if n := logs.Count(`msg="first flag set sent"`); n != len(tests) {
		t.Errorf("%d first sends logged, want %d:\n%s", n, len(tests), logs.String())
	}
}

// Without WithLogger the server logs nothing, and needs no logger.
func TestNoLoggerByDefault(t *testing.T) {
	s := startTCP(t)
	recv(t, openStream(t, plain(t, s), "p", "", ""))
}
