package flagsnap

// The OpenFeature evaluation methods: each reads the flag set in force and
// turns the evaluator's answer into OpenFeature's.

import (
	"context"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/usage"
)

// BooleanEvaluation resolves a boolean flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, def bool, flatCtx openfeature.FlattenedContext) (d openfeature.BoolResolutionDetail) {
	in := p.snap.Load()
	if in == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	e := in.set.Evaluate(flag, flatCtx)
	d.Value = e.Bool(def)
	in.describe(&d.ProviderResolutionDetail, flag, &e)
	return d
}

// StringEvaluation resolves a string flag.
func (p *Provider) StringEvaluation(_ context.Context, flag string, def string, flatCtx openfeature.FlattenedContext) (d openfeature.StringResolutionDetail) {
	in := p.snap.Load()
	if in == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	e := in.set.Evaluate(flag, flatCtx)
	d.Value = e.String(def)
	in.describe(&d.ProviderResolutionDetail, flag, &e)
	return d
}

// IntEvaluation resolves an integer flag. A variant converts only when it
// is a whole number within int64: 10.0 is 10, 3.14 is TYPE_MISMATCH.
func (p *Provider) IntEvaluation(_ context.Context, flag string, def int64, flatCtx openfeature.FlattenedContext) (d openfeature.IntResolutionDetail) {
	in := p.snap.Load()
	if in == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	e := in.set.Evaluate(flag, flatCtx)
	d.Value = e.Int(def)
	in.describe(&d.ProviderResolutionDetail, flag, &e)
	return d
}

// FloatEvaluation resolves a number flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, def float64, flatCtx openfeature.FlattenedContext) (d openfeature.FloatResolutionDetail) {
	in := p.snap.Load()
	if in == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	e := in.set.Evaluate(flag, flatCtx)
	d.Value = e.Float(def)
	in.describe(&d.ProviderResolutionDetail, flag, &e)
	return d
}

// ObjectEvaluation resolves an object flag: map[string]any or []any.
func (p *Provider) ObjectEvaluation(_ context.Context, flag string, def any, flatCtx openfeature.FlattenedContext) (d openfeature.InterfaceResolutionDetail) {
	in := p.snap.Load()
	if in == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	e := in.set.Evaluate(flag, flatCtx)
	d.Value = e.Object(def)
	in.describe(&d.ProviderResolutionDetail, flag, &e)
	return d
}

var notReady = openfeature.ProviderResolutionDetail{
	ResolutionError: openfeature.NewProviderNotReadyResolutionError("no flags have been loaded yet"),
	Reason:          openfeature.ErrorReason,
}

// describe counts the evaluation e of flag and writes it in d as
// OpenFeature says it. It is the one place where evaluations are counted
// and evaluator errors become resolution errors. The detail is written
// where the caller returns it from: built elsewhere and copied, it costs
// more than the rest of a static flag's answer.
func (in *inForce) describe(d *openfeature.ProviderResolutionDetail, flag string, e *evaluator.Evaluation) {
	in.count(flag, e)
	d.Reason, d.Variant, d.FlagMetadata = reasons[e.Reason()&7], e.Variant(), e.Metadata()
	if err := e.Err(); err != nil {
		setError(d, err)
	}
}

// count counts the evaluation e of flag in Usage, unless counting is off.
func (in *inForce) count(flag string, e *evaluator.Evaluation) {
	t := in.counts
	if t == nil {
		return
	}
	switch i := e.Index(); {
	case i < 0:
		if tally := e.Err().Tally; tally != nil {
			t.MissingTallied(flag, &tally.Count, &tally.Window)
		} else {
			t.Missing(flag)
		}
	case e.Err() != nil:
		t.Failed(i, failures[e.Err().Code&7])
	case e.VariantIndex() >= 0:
		t.Served(i, e.VariantIndex())
	default:
		t.Unserved(i)
	}
}

// reasons spells the evaluator's reasons; its size, a power of two, lets
// the lookup go without a bounds check.
var reasons = [8]openfeature.Reason{
	evaluator.ReasonStatic:         openfeature.StaticReason,
	evaluator.ReasonDefault:        openfeature.DefaultReason,
	evaluator.ReasonTargetingMatch: openfeature.TargetingMatchReason,
	evaluator.ReasonDisabled:       openfeature.DisabledReason,
	evaluator.ReasonError:          openfeature.ErrorReason,
}

// failures is the code an evaluator error is counted under (usage.General
// unless named), looked up as reasons is.
var failures = [8]usage.ErrorCode{
	evaluator.CodeParseError:   usage.ParseError,
	evaluator.CodeTypeMismatch: usage.TypeMismatch,
	evaluator.CodeGeneral:      usage.General,
}

// setError writes err in d as OpenFeature's error. Each case assigns
// d's field itself: a ResolutionError returned and then copied goes
// through the stack in a way that cost a missing key a third of its time.
// The flag set keeps the error of a missing key with its message, so that
// past a key's first miss this allocates nothing.
func setError(d *openfeature.ProviderResolutionDetail, err *evaluator.Error) {
	switch err.Code {
	case evaluator.CodeFlagNotFound:
		d.ResolutionError = openfeature.NewFlagNotFoundResolutionError(err.Error())
	case evaluator.CodeParseError:
		d.ResolutionError = openfeature.NewParseErrorResolutionError(err.Error(), err)
	case evaluator.CodeTypeMismatch:
		d.ResolutionError = openfeature.NewTypeMismatchResolutionError(err.Error())
	default:
		d.ResolutionError = openfeature.NewGeneralResolutionError(err.Error(), err)
	}
}
