package flagsnap

import (
	"context"
	"fmt"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
)

// BooleanEvaluation resolves a boolean flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, def bool, flatCtx openfeature.FlattenedContext) openfeature.BoolResolutionDetail {
	set := p.snap.Load()
	if set == nil {
		return openfeature.BoolResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	r := set.ResolveBool(flag, def, flatCtx)
	return openfeature.BoolResolutionDetail{Value: r.Value, ProviderResolutionDetail: detail(flag, r.Variant, r.Reason, r.Err, r.Metadata)}
}

// StringEvaluation resolves a string flag.
func (p *Provider) StringEvaluation(_ context.Context, flag string, def string, flatCtx openfeature.FlattenedContext) openfeature.StringResolutionDetail {
	set := p.snap.Load()
	if set == nil {
		return openfeature.StringResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	r := set.ResolveString(flag, def, flatCtx)
	return openfeature.StringResolutionDetail{Value: r.Value, ProviderResolutionDetail: detail(flag, r.Variant, r.Reason, r.Err, r.Metadata)}
}

// IntEvaluation resolves an integer flag. A variant converts only when it
// is a whole number within int64: 10.0 is 10, 3.14 is TYPE_MISMATCH.
func (p *Provider) IntEvaluation(_ context.Context, flag string, def int64, flatCtx openfeature.FlattenedContext) openfeature.IntResolutionDetail {
	set := p.snap.Load()
	if set == nil {
		return openfeature.IntResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	r := set.ResolveInt(flag, def, flatCtx)
	return openfeature.IntResolutionDetail{Value: r.Value, ProviderResolutionDetail: detail(flag, r.Variant, r.Reason, r.Err, r.Metadata)}
}

// FloatEvaluation resolves a number flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, def float64, flatCtx openfeature.FlattenedContext) openfeature.FloatResolutionDetail {
	set := p.snap.Load()
	if set == nil {
		return openfeature.FloatResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	r := set.ResolveFloat(flag, def, flatCtx)
	return openfeature.FloatResolutionDetail{Value: r.Value, ProviderResolutionDetail: detail(flag, r.Variant, r.Reason, r.Err, r.Metadata)}
}

// ObjectEvaluation resolves an object flag: map[string]any or []any.
func (p *Provider) ObjectEvaluation(_ context.Context, flag string, def any, flatCtx openfeature.FlattenedContext) openfeature.InterfaceResolutionDetail {
	set := p.snap.Load()
	if set == nil {
		return openfeature.InterfaceResolutionDetail{Value: def, ProviderResolutionDetail: notReady}
	}
	r := set.ResolveObject(flag, def, flatCtx)
	return openfeature.InterfaceResolutionDetail{Value: r.Value, ProviderResolutionDetail: detail(flag, r.Variant, r.Reason, r.Err, r.Metadata)}
}

var notReady = openfeature.ProviderResolutionDetail{
	ResolutionError: openfeature.NewProviderNotReadyResolutionError("no flags have been loaded yet"),
	Reason:          openfeature.ErrorReason,
}

var reasons = [...]openfeature.Reason{
	evaluator.ReasonStatic:         openfeature.StaticReason,
	evaluator.ReasonDefault:        openfeature.DefaultReason,
	evaluator.ReasonTargetingMatch: openfeature.TargetingMatchReason,
	evaluator.ReasonDisabled:       openfeature.DisabledReason,
	evaluator.ReasonError:          openfeature.ErrorReason,
}

// detail maps the evaluator's answer to OpenFeature's. This is the only
// place where evaluator errors become resolution errors. Metadata is passed
// as it is: OpenFeature copies it before a caller sees it.
func detail(flag, variant string, reason evaluator.Reason, err *evaluator.Error, meta map[string]any) openfeature.ProviderResolutionDetail {
	d := openfeature.ProviderResolutionDetail{Variant: variant, FlagMetadata: meta}
	if int(reason) < len(reasons) {
		d.Reason = reasons[reason]
	}
	if err != nil {
		d.ResolutionError = resolutionError(flag, err)
	}
	return d
}

func resolutionError(flag string, err *evaluator.Error) openfeature.ResolutionError {
	switch err.Code {
	case evaluator.CodeFlagNotFound:
		return openfeature.NewFlagNotFoundResolutionError(fmt.Sprintf("flag %q not found", flag))
	case evaluator.CodeParseError:
		return openfeature.NewParseErrorResolutionError(err.Error(), err)
	case evaluator.CodeTypeMismatch:
		return openfeature.NewTypeMismatchResolutionError(err.Error())
	}
	return openfeature.NewGeneralResolutionError(err.Error(), err)
}
