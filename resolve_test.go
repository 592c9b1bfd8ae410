package flagsnap

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"
)

func TestMissingFlagIsNamed(t *testing.T) {
	p, _, _ := started(t)
	if err := openfeature.SetNamedProviderAndWait(t.Name(), p); err != nil {
		t.Fatal(err)
	}
	client := openfeature.NewClient(t.Name())
	ctx := context.Background()
	for _, tt := range []struct{ key, want string }{
		{"colour", `flag "colour" not found; did you mean "color"?`},
		{"Color", `flag "Color" not found; did you mean "color"?`},
		{"beat", `flag "beat" not found`}, // an edit in four letters is another word
		{"missing", `flag "missing" not found`},
	} {
		t.Run(tt.key, func(t *testing.T) {
			d, err := client.BooleanValueDetails(ctx, tt.key, true, openfeature.EvaluationContext{})
			if err == nil || !d.Value || d.ErrorCode != openfeature.FlagNotFoundCode || d.ErrorMessage != tt.want {
				t.Errorf("got %q (%s), want %q", d.ErrorMessage, d.ErrorCode, tt.want)
			}
			r := p.StringEvaluation(ctx, tt.key, "d", nil)
			if r.ResolutionError.Error() != "FLAG_NOT_FOUND: "+tt.want || r.Value != "d" || r.Reason != openfeature.ErrorReason {
				t.Errorf("StringEvaluation: %+v", r)
			}
		})
	}
}

func TestMissingFlagAllocatesNothingAfterItsFirstMiss(t *testing.T) {
	p, _, _ := started(t)
	ctx := context.Background()
	p.BooleanEvaluation(ctx, "colour", false, nil)
	allocs := testing.AllocsPerRun(200, func() {
		if d := p.BooleanEvaluation(ctx, "colour", false, nil); d.ResolutionError.Error() == "" {
			t.Fatal("no error")
		}
	})
	// Error() formats the message; the evaluation itself allocates nothing.
	if n := testing.AllocsPerRun(200, func() { p.BooleanEvaluation(ctx, "colour", false, nil) }); n != 0 {
		t.Errorf("%v allocations per evaluation (%v with the message read)", n, allocs)
	}
	for i := range 1000 { // the missing keys a flag set names
		p.BooleanEvaluation(ctx, fmt.Sprintf("k%d", i), false, nil)
	}
	d := p.BooleanEvaluation(ctx, "one-too-many", false, nil)
	if d.ResolutionError.Error() != "FLAG_NOT_FOUND: flag not found" {
		t.Errorf("past the bound: %v", d.ResolutionError)
	}
	if n := testing.AllocsPerRun(200, func() { p.BooleanEvaluation(ctx, "and-another", false, nil) }); n != 0 {
		t.Errorf("past the bound: %v allocations per evaluation", n)
	}
}

// The errors kept belong to the flag set in force: a key that a new set
// defines, or comes closer to, is answered from that set's.
func TestMissingFlagsFollowTheFlagSetInForce(t *testing.T) {
	p, src, _ := started(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				d := p.IntEvaluation(ctx, fmt.Sprintf("limits-%d", (i+g)%50), 0, nil)
				if d.ResolutionError.Error() == "" {
					t.Error("no error")
					return
				}
			}
		})
	}
	if d := p.IntEvaluation(ctx, "limits", 0, nil); d.ResolutionError.Error() != `FLAG_NOT_FOUND: flag "limits" not found` {
		t.Errorf("before: %v", d.ResolutionError)
	}
	if err := src.sink(t).Update(update(flagsV2)); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if d := p.IntEvaluation(ctx, "limits", 0, nil); d.ResolutionError.Error() != `FLAG_NOT_FOUND: flag "limits" not found; did you mean "limit"?` {
		t.Errorf("after: %v", d.ResolutionError)
	}
	if d := p.IntEvaluation(ctx, "limit", 0, nil); d.Value != 10 {
		t.Errorf("limit: %+v", d)
	}
}
