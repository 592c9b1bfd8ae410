package flagsnap

// The OpenFeature evaluation methods: each reads the flag set in force and
// turns the evaluator's answer into OpenFeature's.

import (
	"context"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
)

// BooleanEvaluation resolves a boolean flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, def bool, flatCtx openfeature.FlattenedContext) openfeature.BoolResolutionDetail {
	in := p.snap.Load()
	if in == nil {
		return openfeature.BoolResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	v, e := in.set.Evaluate(flag, flatCtx).Bool(def)
	return openfeature.BoolResolutionDetail{Value: v, ProviderResolutionDetail: in.detail(flag, e)}
}

// StringEvaluation resolves a string flag.
func (p *Provider) StringEvaluation(_ context.Context, flag string, def string, flatCtx openfeature.FlattenedContext) openfeature.StringResolutionDetail {
	in := p.snap.Load()
	if in == nil {
		return openfeature.StringResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	v, e := in.set.Evaluate(flag, flatCtx).String(def)
	return openfeature.StringResolutionDetail{Value: v, ProviderResolutionDetail: in.detail(flag, e)}
}

// IntEvaluation resolves an integer flag. A variant converts only when it
// is a whole number within int64: 10.0 is 10, 3.14 is TYPE_MISMATCH.
func (p *Provider) IntEvaluation(_ context.Context, flag string, def int64, flatCtx openfeature.FlattenedContext) openfeature.IntResolutionDetail {
	in := p.snap.Load()
	if in == nil {
		return openfeature.IntResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	v, e := in.set.Evaluate(flag, flatCtx).Int(def)
	return openfeature.IntResolutionDetail{Value: v, ProviderResolutionDetail: in.detail(flag, e)}
}

// FloatEvaluation resolves a number flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, def float64, flatCtx openfeature.FlattenedContext) openfeature.FloatResolutionDetail {
	in := p.snap.Load()
	if in == nil {
		return openfeature.FloatResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	v, e := in.set.Evaluate(flag, flatCtx).Float(def)
	return openfeature.FloatResolutionDetail{Value: v, ProviderResolutionDetail: in.detail(flag, e)}
}

// ObjectEvaluation resolves an object flag: map[string]any or []any.
func (p *Provider) ObjectEvaluation(_ context.Context, flag string, def any, flatCtx openfeature.FlattenedContext) openfeature.InterfaceResolutionDetail {
	in := p.snap.Load()
	if in == nil {
		return openfeature.InterfaceResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	v, e := in.set.Evaluate(flag, flatCtx).Object(def)
	return openfeature.InterfaceResolutionDetail{Value: v, ProviderResolutionDetail: in.detail(flag, e)}
}

var notReady = openfeature.ProviderResolutionDetail{
	ResolutionError: openfeature.NewProviderNotReadyResolutionError("no flags have been loaded yet"),
	Reason:          openfeature.ErrorReason,
}

// detail counts the evaluation e of flag and says it as OpenFeature does.
// It is the one place where evaluations are counted and evaluator errors
// become resolution errors.
func (in *inForce) detail(flag string, e evaluator.Evaluation) openfeature.ProviderResolutionDetail {
	if in.counts != nil {
		count(in.counts, flag, e)
	}
	d := openfeature.ProviderResolutionDetail{Reason: reasons[e.Reason&7], Variant: e.Variant(), FlagMetadata: e.Metadata}
	if e.Err != nil {
		d.ResolutionError = resolutionError(e.Err)
	}
	return d
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

// flagNotFound is shared: an application that asks for a missing flag
// does so on every evaluation, and OpenFeature names the flag itself.
var flagNotFound = openfeature.NewFlagNotFoundResolutionError("flag not found")

func resolutionError(err *evaluator.Error) openfeature.ResolutionError {
	switch err.Code {
	case evaluator.CodeFlagNotFound:
		return flagNotFound
	case evaluator.CodeParseError:
		return openfeature.NewParseErrorResolutionError(err.Error(), err)
	case evaluator.CodeTypeMismatch:
		return openfeature.NewTypeMismatchResolutionError(err.Error())
	default:
		return openfeature.NewGeneralResolutionError(err.Error(), err)
	}
}
