package metric

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one series: its name, labels and value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape GETs url with client and parses the text exposition format.
func Scrape(ctx context.Context, client *http.Client, url string, header http.Header) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("scrape %s: %s: %s", url, resp.Status, msg)
	}
	s, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return s, nil
}

// Parse reads the text exposition format into one sample per series, a
// histogram or summary as the _bucket, _sum and _count (or quantile) series
// its text form has.
func Parse(r io.Reader) ([]Sample, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	var out []Sample
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(name string, v float64, extra ...string) {
				l := maps.Clone(labels)
				for i := 0; i+1 < len(extra); i += 2 {
					l[extra[i]] = extra[i+1]
				}
				out = append(out, Sample{Name: name, Labels: l, Value: v})
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add(name+"_bucket", float64(b.GetCumulativeCount()), "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))
				}
				add(name+"_sum", h.GetSampleSum())
				add(name+"_count", float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				q := m.GetSummary()
				for _, x := range q.GetQuantile() {
					add(name, x.GetValue(), "quantile", strconv.FormatFloat(x.GetQuantile(), 'g', -1, 64))
				}
				add(name+"_sum", q.GetSampleSum())
				add(name+"_count", float64(q.GetSampleCount()))
			default:
				add(name, m.GetUntyped().GetValue())
			}
		}
	}
	return out, nil
}

// Sum adds the values of the series called name whose labels include all
// of match.
func Sum(samples []Sample, name string, match map[string]string) float64 {
	var t float64
	for _, s := range samples {
		if s.Name == name && matches(s.Labels, match) {
			t += s.Value
		}
	}
	return t
}

func matches(l, m map[string]string) bool {
	for k, v := range m {
		if l[k] != v {
			return false
		}
	}
	return true
}
