package flagsnap

import (
	"context"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
)

// The five typed methods are written out rather than built on one generic
// helper: Go does not inline a generic call made through its dictionary,
// and the extra call and copy of the detail cost a third of a static
// flag's evaluation. They take the evaluator's answer field by field (see
// evaluator.FlagSet.ResolveBoolFields) for the same reason.

// BooleanEvaluation resolves a boolean flag.
func (p *Provider) BooleanEvaluation(_ context.Context, flag string, def bool, flatCtx openfeature.FlattenedContext) (d openfeature.BoolResolutionDetail) {
	set := p.snap.Load()
	if set == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	var reason evaluator.Reason
	var err *evaluator.Error
	d.Value, d.Variant, reason, err, d.FlagMetadata = set.ResolveBoolFields(flag, def, flatCtx)
	fill(&d.ProviderResolutionDetail, reason, err)
	return d
}

// StringEvaluation resolves a string flag.
func (p *Provider) StringEvaluation(_ context.Context, flag string, def string, flatCtx openfeature.FlattenedContext) (d openfeature.StringResolutionDetail) {
	set := p.snap.Load()
	if set == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	var reason evaluator.Reason
	var err *evaluator.Error
	d.Value, d.Variant, reason, err, d.FlagMetadata = set.ResolveStringFields(flag, def, flatCtx)
	fill(&d.ProviderResolutionDetail, reason, err)
	return d
}

// IntEvaluation resolves an integer flag. A variant converts only when it
// is a whole number within int64: 10.0 is 10, 3.14 is TYPE_MISMATCH.
func (p *Provider) IntEvaluation(_ context.Context, flag string, def int64, flatCtx openfeature.FlattenedContext) (d openfeature.IntResolutionDetail) {
	set := p.snap.Load()
	if set == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	var reason evaluator.Reason
	var err *evaluator.Error
	d.Value, d.Variant, reason, err, d.FlagMetadata = set.ResolveIntFields(flag, def, flatCtx)
	fill(&d.ProviderResolutionDetail, reason, err)
	return d
}

// FloatEvaluation resolves a number flag.
func (p *Provider) FloatEvaluation(_ context.Context, flag string, def float64, flatCtx openfeature.FlattenedContext) (d openfeature.FloatResolutionDetail) {
	set := p.snap.Load()
	if set == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	var reason evaluator.Reason
	var err *evaluator.Error
	d.Value, d.Variant, reason, err, d.FlagMetadata = set.ResolveFloatFields(flag, def, flatCtx)
	fill(&d.ProviderResolutionDetail, reason, err)
	return d
}

// ObjectEvaluation resolves an object flag: map[string]any or []any.
func (p *Provider) ObjectEvaluation(_ context.Context, flag string, def any, flatCtx openfeature.FlattenedContext) (d openfeature.InterfaceResolutionDetail) {
	set := p.snap.Load()
	if set == nil {
		d.Value, d.ProviderResolutionDetail = def, notReady
		return d
	}
	var reason evaluator.Reason
	var err *evaluator.Error
	d.Value, d.Variant, reason, err, d.FlagMetadata = set.ResolveObjectFields(flag, def, flatCtx)
	fill(&d.ProviderResolutionDetail, reason, err)
	return d
}

var flagNotFound = openfeature.NewFlagNotFoundResolutionError("flag not found")

var notReady = openfeature.ProviderResolutionDetail{
	ResolutionError: openfeature.NewProviderNotReadyResolutionError("no flags have been loaded yet"),
	Reason:          openfeature.ErrorReason,
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

// fill maps the evaluator's reason and error to OpenFeature's, in place:
// the detail is written where the caller returns it from (the variant and
// the metadata are stored there directly; OpenFeature copies the metadata
// before a caller sees it). This is the only place where evaluator errors
// become resolution errors.
func fill(d *openfeature.ProviderResolutionDetail, reason evaluator.Reason, err *evaluator.Error) {
	d.Reason = reasons[reason&7]
	if err != nil {
		fillError(d, err)
	}
}

// fillError is kept out of line so that fill, which every resolution
// passes through, is inlined.
//
//go:noinline
func fillError(d *openfeature.ProviderResolutionDetail, err *evaluator.Error) {
	switch err.Code {
	case evaluator.CodeFlagNotFound:
		// One shared error: an application asking for a missing flag does
		// so on every evaluation, and OpenFeature names the flag itself.
		// It is copied from memory straight into d: returned through
		// registers, it was stored in words and reloaded in wider moves, a
		// stall that cost a missing flag a sixth of its time.
		d.ResolutionError = flagNotFound
	case evaluator.CodeParseError:
		d.ResolutionError = openfeature.NewParseErrorResolutionError(err.Error(), err)
	case evaluator.CodeTypeMismatch:
		d.ResolutionError = openfeature.NewTypeMismatchResolutionError(err.Error())
	default:
		d.ResolutionError = openfeature.NewGeneralResolutionError(err.Error(), err)
	}
}
