package otelflagsnap_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/open-feature/go-sdk/openfeature"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/otelflagsnap"
	"github.com/flagsnap/flagsnap/source"
)

func Example() {
	provider, err := flagsnap.NewProvider(flagsnap.WithSource(source.NewMemory([]byte(`{"flags": {
	  "dark-mode": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`))))
	if err != nil {
		log.Fatal(err)
	}
	if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
		log.Fatal(err)
	}
	defer provider.Shutdown()

	// A reader that collects when asked; a service would use an exporter.
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer meters.Shutdown(context.Background())

	unregister, err := otelflagsnap.Register(provider, otelflagsnap.WithMeterProvider(meters))
	if err != nil {
		log.Fatal(err)
	}
	defer unregister()

	for range 3 {
		provider.BooleanEvaluation(context.Background(), "dark-mode", false, nil)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "feature_flag.evaluations" {
			for _, dp := range sum.DataPoints {
				key, _ := dp.Attributes.Value("feature_flag.key")
				variant, _ := dp.Attributes.Value("feature_flag.result.variant")
				fmt.Printf("%s %s %s: %d\n", m.Name, key.AsString(), variant.AsString(), dp.Value)
			}
		}
	}
	// Output:
	// feature_flag.evaluations dark-mode off: 3
}

// Two providers reported through one meter provider, each under a name of
// its own: both serve flags given with WithFlags, whose origin, the
// default name, is "memory" for both.
func ExampleWithProviderName() {
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer meters.Shutdown(context.Background())

	doc := []byte(`{"flags": {
	  "dark-mode": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`)
	for name, evaluations := range map[string]int{"checkout": 2, "search": 5} {
		provider, err := flagsnap.NewProvider(flagsnap.WithFlags(doc))
		if err != nil {
			log.Fatal(err)
		}
		if err := provider.Init(openfeature.EvaluationContext{}); err != nil {
			log.Fatal(err)
		}
		defer provider.Shutdown()
		unregister, err := otelflagsnap.Register(provider,
			otelflagsnap.WithMeterProvider(meters), otelflagsnap.WithProviderName(name))
		if err != nil {
			log.Fatal(err)
		}
		defer unregister()
		for range evaluations {
			provider.BooleanEvaluation(context.Background(), "dark-mode", false, nil)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "feature_flag.evaluations" {
			for _, dp := range sum.DataPoints {
				name, _ := dp.Attributes.Value("flagsnap.provider.name")
				key, _ := dp.Attributes.Value("feature_flag.key")
				lines = append(lines, fmt.Sprintf("%s %s: %d", name.AsString(), key.AsString(), dp.Value))
			}
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// checkout dark-mode: 2
	// search dark-mode: 5
}
