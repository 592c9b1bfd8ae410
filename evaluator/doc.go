// Package evaluator loads flagd flag sets and evaluates flags against an
// evaluation context, in process.
//
//	set, err := evaluator.Load(doc) // JSON or YAML
//	e := set.Evaluate("new-banner", map[string]any{"targetingKey": "user-1"})
//	on := e.Bool(false) // or set.ResolveBool("new-banner", false, ctx)
//
// [Load] decodes a flag document once ("flags" as an object or an array,
// "$evaluators" referenced with {"$ref": name}, flag-set and flag metadata)
// and compiles every targeting rule. The [FlagSet] it returns is immutable
// and safe for concurrent use; [WithPrevious] lets a new document take the
// flags written as before from the set it replaces.
//
// [FlagSet.Evaluate] looks the flag up, runs its compiled rule against the
// caller's context map in place (no copy, no JSON encoding, no locks) and
// maps the result to a variant as flagd does. The [Evaluation] names the
// flag's index in its set and the variant served, so that a caller can keep
// per-flag data, such as counts, in slices.
//
// # Targeting language
//
// Rules are JsonLogic with the behaviour of github.com/diegoholiveira/jsonlogic/v3,
// flagd's own engine, operator by operator, plus flagd's starts_with,
// ends_with, sem_ver and fractional (in the three bucketing versions of
// package fractional, and under its legacy name fractionalEvaluation). The
// data a rule sees is, in order of precedence, $flagd (flagKey and
// timestamp), the flag set's enrichment ([FlagSet.WithEnrichment]) and the
// caller's context. Fractional v3 hashes a value a var takes from the
// context as the caller's Go value, exactly (see fractional.AppendCBOR).
//
// # Problems
//
// A document that is not a flag set is rejected whole ([SyntaxError] with
// line and column, [DocumentError]). A problem confined to one flag only
// breaks that flag: it answers [CodeParseError] and the other flags load;
// [WithStrict] rejects the whole document instead, as flagd does. Each
// problem says where in the document it is written ([FlagProblem.Path]).
//
// [FlagSet.Explain] evaluates a flag as Evaluate does and records the path
// its rule took, for a debug endpoint or the flagsnap command.
package evaluator
