package flagsnap

import (
	"context"
	"strconv"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
)

// BooleanEvaluation resolves a boolean flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, def bool, flatCtx openfeature.FlattenedContext) openfeature.BoolResolutionDetail {
	return resolveWith(p, flag, def, flatCtx, (*evaluator.FlagSet).ResolveBool)
}

// StringEvaluation resolves a string flag.
func (p *Provider) StringEvaluation(_ context.Context, flag string, def string, flatCtx openfeature.FlattenedContext) openfeature.StringResolutionDetail {
	return resolveWith(p, flag, def, flatCtx, (*evaluator.FlagSet).ResolveString)
}

// IntEvaluation resolves an integer flag. A variant converts only when it
// is a whole number within int64: 10.0 is 10, 3.14 is TYPE_MISMATCH.
func (p *Provider) IntEvaluation(_ context.Context, flag string, def int64, flatCtx openfeature.FlattenedContext) openfeature.IntResolutionDetail {
	return resolveWith(p, flag, def, flatCtx, (*evaluator.FlagSet).ResolveInt)
}

// FloatEvaluation resolves a number flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, def float64, flatCtx openfeature.FlattenedContext) openfeature.FloatResolutionDetail {
	return resolveWith(p, flag, def, flatCtx, (*evaluator.FlagSet).ResolveFloat)
}

// ObjectEvaluation resolves an object flag: map[string]any or []any.
func (p *Provider) ObjectEvaluation(_ context.Context, flag string, def any, flatCtx openfeature.FlattenedContext) openfeature.InterfaceResolutionDetail {
	return resolveWith(p, flag, def, flatCtx, (*evaluator.FlagSet).ResolveObject)
}

// resolveWith reads the snapshot in force once and resolves the flag in it.
func resolveWith[T any](p *Provider, flag string, def T, flatCtx openfeature.FlattenedContext,
	resolve func(*evaluator.FlagSet, string, T, map[string]any) evaluator.Resolution[T],
) openfeature.GenericResolutionDetail[T] {
	set := p.snap.Load()
	if set == nil {
		return openfeature.GenericResolutionDetail[T]{Value: def, ProviderResolutionDetail: notReady}
	}
	r := resolve(set, flag, def, flatCtx)
	return openfeature.GenericResolutionDetail[T]{Value: r.Value, ProviderResolutionDetail: detail(flag, r.Variant, r.Reason, r.Err, r.Metadata)}
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
		// The evaluator's error is shared by every missing key; the
		// message names this one, without fmt on a path callers may hit
		// on every evaluation.
		return openfeature.NewFlagNotFoundResolutionError("flag " + strconv.Quote(flag) + " not found")
	case evaluator.CodeParseError:
		return openfeature.NewParseErrorResolutionError(err.Error(), err)
	case evaluator.CodeTypeMismatch:
		return openfeature.NewTypeMismatchResolutionError(err.Error())
	}
	return openfeature.NewGeneralResolutionError(err.Error(), err)
}
