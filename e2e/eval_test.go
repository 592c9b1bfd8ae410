package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/cucumber/godog"
	"github.com/open-feature/go-sdk/openfeature"
)

// evaluationTimeout bounds one evaluation; the provider never blocks, so
// it only matters if something is badly wrong.
const evaluationTimeout = 5 * time.Second

type flagRequest struct {
	typ string // Boolean, String, Integer, Float or Object
	key string
	def any
}

type evaluation struct {
	value   any
	details openfeature.EvaluationDetails
}

// parseValue reads a flag value, or a context value, of the scenario's type
// typ, with the Go type an application would use. Strings are taken
// literally: the testbed's expected buckets for "A\u0000B" are those of the
// backslash text.
func parseValue(typ, raw string) (any, error) {
	switch typ {
	case "Boolean":
		return strconv.ParseBool(raw)
	case "String":
		return raw, nil
	case "Integer":
		return strconv.ParseInt(raw, 10, 64)
	case "Float":
		return strconv.ParseFloat(raw, 64)
	case "Object":
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("object value %q: %w", raw, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown value type %q", typ)
}

func (s *scenario) aFlag(typ, key, def string) error {
	v, err := parseValue(typ, def)
	if err != nil {
		return err
	}
	s.flag = &flagRequest{typ: typ, key: key, def: v}
	return nil
}

func (s *scenario) aContextKey(key, typ, raw string) error {
	v, err := parseValue(typ, raw)
	if err != nil {
		return err
	}
	s.attrs[key] = v
	return nil
}

func (s *scenario) aNestedContextKey(outer, inner, value string) error {
	m, ok := s.attrs[outer].(map[string]any)
	if !ok {
		m = map[string]any{}
		s.attrs[outer] = m
	}
	m[inner] = value
	return nil
}

func (s *scenario) aTargetingKey(key string) error {
	s.tkey = key
	return nil
}

func (s *scenario) theFlagWasEvaluated() error {
	f := s.flag
	if f == nil {
		return errors.New("no flag was named")
	}
	ctx, cancel := context.WithTimeout(s.ctx, evaluationTimeout)
	defer cancel()
	ec := openfeature.NewEvaluationContext(s.tkey, s.attrs)
	c := s.client
	switch f.typ {
	case "Boolean":
		s.result = resultOf(c.BooleanValueDetails(ctx, f.key, f.def.(bool), ec))
	case "String":
		s.result = resultOf(c.StringValueDetails(ctx, f.key, f.def.(string), ec))
	case "Integer":
		s.result = resultOf(c.IntValueDetails(ctx, f.key, f.def.(int64), ec))
	case "Float":
		s.result = resultOf(c.FloatValueDetails(ctx, f.key, f.def.(float64), ec))
	case "Object":
		s.result = resultOf(c.ObjectValueDetails(ctx, f.key, f.def, ec))
	}
	return nil
}

// resultOf keeps a typed evaluation's answer. The error only repeats the
// details' error code, which is what the scenarios check.
func resultOf[T any](d openfeature.GenericEvaluationDetails[T], _ error) *evaluation {
	return &evaluation{value: d.Value, details: d.EvaluationDetails}
}

func (s *scenario) evaluated() (*evaluation, error) {
	if s.result == nil {
		return nil, errors.New("the flag was not evaluated")
	}
	return s.result, nil
}

func (s *scenario) theValueShouldBe(raw string) error {
	r, err := s.evaluated()
	if err != nil {
		return err
	}
	want, err := parseValue(s.flag.typ, raw)
	if err != nil {
		return err
	}
	// Objects are compared as they come, without a JSON round trip: an
	// application gets map[string]any and []any with float64 numbers, as
	// encoding/json gives, and nothing else passes.
	if !reflect.DeepEqual(r.value, want) {
		return fmt.Errorf("value %#v, want %#v (%s)", r.value, want, describe(r.details))
	}
	return nil
}

func (s *scenario) theReasonShouldBe(reason string) error {
	return s.detailShouldBe("reason", reason, func(d openfeature.EvaluationDetails) string { return string(d.Reason) })
}

func (s *scenario) theErrorCodeShouldBe(code string) error {
	return s.detailShouldBe("error code", code, func(d openfeature.EvaluationDetails) string { return string(d.ErrorCode) })
}

func (s *scenario) theVariantShouldBe(variant string) error {
	return s.detailShouldBe("variant", variant, func(d openfeature.EvaluationDetails) string { return d.Variant })
}

// detailShouldBe checks one field of the evaluation's details.
func (s *scenario) detailShouldBe(what, want string, field func(openfeature.EvaluationDetails) string) error {
	r, err := s.evaluated()
	if err != nil {
		return err
	}
	if got := field(r.details); got != want {
		return fmt.Errorf("%s %q, want %q (%s)", what, got, want, describe(r.details))
	}
	return nil
}

// theMetadataShouldContain checks each entry through the accessor of its
// type, as an application reads it.
func (s *scenario) theMetadataShouldContain(table *godog.Table) error {
	r, err := s.evaluated()
	if err != nil {
		return err
	}
	if len(table.Rows) < 2 {
		return errors.New("the metadata table has no entries")
	}
	md := r.details.FlagMetadata
	var errs []error
	for _, row := range table.Rows[1:] {
		if len(row.Cells) != 3 {
			return fmt.Errorf("metadata row with %d cells, want key, metadata_type, value", len(row.Cells))
		}
		key, typ, raw := row.Cells[0].Value, row.Cells[1].Value, row.Cells[2].Value
		var got, want any
		var gerr, werr error
		switch typ {
		case "String":
			got, gerr = md.GetString(key)
			want = raw
		case "Integer":
			got, gerr = md.GetInt(key)
			want, werr = strconv.ParseInt(raw, 10, 64)
		case "Float":
			got, gerr = md.GetFloat(key)
			want, werr = strconv.ParseFloat(raw, 64)
		case "Boolean":
			got, gerr = md.GetBool(key)
			want, werr = strconv.ParseBool(raw)
		default:
			return fmt.Errorf("unknown metadata type %q", typ)
		}
		switch {
		case werr != nil:
			return werr
		case gerr != nil:
			errs = append(errs, fmt.Errorf("metadata %q: %w", key, gerr))
		case got != want:
			errs = append(errs, fmt.Errorf("metadata %q is %#v, want %#v", key, got, want))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w (metadata %v)", errors.Join(errs...), md)
	}
	return nil
}

func (s *scenario) theMetadataIsEmpty() error {
	r, err := s.evaluated()
	if err != nil {
		return err
	}
	if len(r.details.FlagMetadata) != 0 {
		return fmt.Errorf("metadata %v, want none", r.details.FlagMetadata)
	}
	return nil
}

func describe(d openfeature.EvaluationDetails) string {
	out := fmt.Sprintf("flag %s: variant %q, reason %s", d.FlagKey, d.Variant, d.Reason)
	if d.ErrorCode != "" {
		out += fmt.Sprintf(", error %s: %s", d.ErrorCode, d.ErrorMessage)
	}
	return out
}
