package metric_test

import (
	"strings"
	"testing"

	"kubevirt.dev/virt/bench/metric"
)

const text = `# HELP apiserver_request_total Counter
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",resource="pods",subresource="",verb="POST"} 3
apiserver_request_total{code="200",component="apiserver",resource="pods",subresource="status",verb="PATCH"} 5
apiserver_request_total{code="201",component="apiserver",resource="events",subresource="",verb="POST"} 2
go_memstats_heap_inuse_bytes 1.2345e+07
weird{a="x\"y,z",b="2"} 1
`

func TestParseAndSum(t *testing.T) {
	s, err := metric.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"apiserver_request_total", map[string]string{"resource": "pods"}, 8},
		{"apiserver_request_total", map[string]string{"resource": "pods", "subresource": ""}, 3},
		{"apiserver_request_total", nil, 10},
		{"go_memstats_heap_inuse_bytes", nil, 12345000},
		{"weird", map[string]string{"a": `x"y,z`, "b": "2"}, 1},
	} {
		if got := metric.Sum(s, tc.name, tc.match); got != tc.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", tc.name, tc.match, got, tc.want)
		}
	}
}
