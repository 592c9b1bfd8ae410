package flagsnap

// The log handler that adds to every line of the provider and its source
// which source it is and what is served.

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// servingHandler adds to every log line of the provider and its source
// which source it is and what the provider serves at that moment, so that
// any one line tells the whole state.
type servingHandler struct {
	slog.Handler
	p *Provider
}

func (h *servingHandler) Handle(ctx context.Context, rec slog.Record) error {
	rec.AddAttrs(slog.String("source", h.p.origin.name), slog.String("serving", h.p.serving()))
	return h.Handler.Handle(ctx, rec)
}

func (h *servingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &servingHandler{Handler: h.Handler.WithAttrs(attrs), p: h.p}
}

func (h *servingHandler) WithGroup(name string) slog.Handler {
	return &servingHandler{Handler: h.Handler.WithGroup(name), p: h.p}
}

// serving says what evaluations answer from. It takes no lock: log lines
// are written with the run's lock held.
func (p *Provider) serving() string {
	set := p.flags()
	if set == nil {
		return "nothing yet"
	}
	at := time.Unix(0, p.loadedAt.Load())
	return fmt.Sprintf("%d flags loaded at %s", set.Len(), at.Format(time.RFC3339))
}
