package main

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The example's evaluations, scraped over HTTP and read with Prometheus's
// own parser, under the names and labels the exporter gives them.
func TestPrometheusScrape(t *testing.T) {
	before := time.Now()
	const flagFile = "../../examples/file/flags.json"
	families := scrape(t, flagFile)
	// The provider is named by its origin, the flag file's path.
	points := func(t *testing.T, mf *dto.MetricFamily) map[string]float64 { return points(t, mf, flagFile) }
	for _, tc := range []struct {
		name   string
		typ    dto.MetricType
		points map[string]float64 // by labels, those every point has aside
	}{
		{"feature_flag_evaluations_total", dto.MetricType_COUNTER, map[string]float64{
			`feature_flag_key="banner-color",feature_flag_result_variant="red"`:  3,
			`feature_flag_key="banner-color",feature_flag_result_variant="blue"`: 1,
			`feature_flag_key="dark-mode",feature_flag_result_variant="on"`:      2,
			`feature_flag_key="dark-mode",feature_flag_result_variant="off"`:     2,
			`feature_flag_key="new-checkout",feature_flag_result_variant="on"`:   2,
			`feature_flag_key="new-checkout",feature_flag_result_variant="off"`:  2,
			`feature_flag_key="search-engine"`:                                   0,
		}},
		{"feature_flag_missing_evaluations_total", dto.MetricType_COUNTER, map[string]float64{
			`feature_flag_key="new-chekout"`: 1,
		}},
		{"flagsnap_source_state", dto.MetricType_GAUGE, map[string]float64{
			`state="connecting"`: 0, `state="serving"`: 1, `state="stale"`: 0,
			`state="error"`: 0, `state="fatal"`: 0, `state="stopped"`: 0,
		}},
		{"flagsnap_source_flags", dto.MetricType_GAUGE, map[string]float64{"": 4}},
		{"flagsnap_source_flag_sets_total", dto.MetricType_COUNTER, map[string]float64{
			`result="received"`: 1, `result="applied"`: 1, `result="rejected"`: 0, `result="unchanged"`: 0,
		}},
		{"flagsnap_source_reconnects_total", dto.MetricType_COUNTER, map[string]float64{"": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mf := families[tc.name]
			if mf == nil {
				t.Fatal("not scraped")
			}
			if mf.GetType() != tc.typ {
				t.Errorf("type %v, want %v", mf.GetType(), tc.typ)
			}
			got := points(t, mf)
			for labels, want := range tc.points {
				if v, ok := got[labels]; !ok || v != want {
					t.Errorf("{%s}: %v (scraped: %v), want %v", labels, v, ok, want)
				}
			}
			for labels, v := range got {
				if _, ok := tc.points[labels]; !ok {
					t.Errorf("{%s} %v: not expected", labels, v)
				}
			}
		})
	}

	applied := points(t, families["flagsnap_source_applied_time_seconds"])[""]
	if at := time.Unix(0, int64(applied*1e9)); at.Before(before.Add(-time.Millisecond)) || at.After(time.Now()) {
		t.Errorf("flagsnap_source_applied_time_seconds: %v, not since the test began at %v", at, before)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{
		"feature_flag_evaluations_total", "feature_flag_missing_evaluations_total",
		"flagsnap_source_applied_time_seconds", "flagsnap_source_flag_sets_total", "flagsnap_source_flags",
		"flagsnap_source_reconnects_total", "flagsnap_source_state", "target_info",
	}
	if !slices.Equal(names, want) {
		t.Errorf("metric families %v, want %v", names, want)
	}
}

// scrape runs the example on a loopback port, reads /metrics once and
// stops it.
func scrape(t *testing.T, flagFile string) map[string]*dto.MetricFamily {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, flagFile) }()
	defer func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not return within 10 s of its context's end")
		}
	}()

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("status %s, content type %q", resp.Status, ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// points are mf's values by their labels, written `name="value"` in the
// order Prometheus sorts them, without those every flagsnap series has,
// which it checks: the provider's name among them.
func points(t *testing.T, mf *dto.MetricFamily, name string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		var labels []string
		scoped, named := false, false
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "feature_flag_provider_name":
				if l.GetValue() != "flagsnap" {
					t.Errorf("%s: provider %q", mf.GetName(), l.GetValue())
				}
			case "flagsnap_provider_name":
				named = l.GetValue() == name
				if !named {
					t.Errorf("%s: provider named %q, want %q", mf.GetName(), l.GetValue(), name)
				}
			case "otel_scope_name":
				scoped = l.GetValue() == "github.com/flagsnap/flagsnap/otelflagsnap"
			case "otel_scope_version", "otel_scope_schema_url":
			default:
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
		}
		if !scoped {
			t.Errorf("%s %v: not in otelflagsnap's scope", mf.GetName(), labels)
		}
		if !named {
			t.Errorf("%s %v: no flagsnap_provider_name", mf.GetName(), labels)
		}
		v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
		out[strings.Join(labels, ",")] = v
	}
	return out
}
