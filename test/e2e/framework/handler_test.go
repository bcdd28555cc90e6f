package framework

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"
	// The provider virt-handler registers (node/manager).
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2/textlogger"
)

// TestQueueMetrics reads a work queue's counters from the exposition the
// handler's metrics provider writes.
func TestQueueMetrics(t *testing.T) {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: handlerQueue})
	defer q.ShutDown()
	other := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: handlerQueue + "-other"})
	defer other.ShutDown()
	other.Add("x")
	q.Add("ns/a")
	q.Add("ns/b")
	key, _ := q.Get()
	q.Done(key)

	srv := httptest.NewServer(legacyregistry.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := queueMetrics(raw, handlerQueue, "workqueue_depth", "workqueue_adds_total", "workqueue_work_duration_seconds_count")
	if err != nil {
		t.Fatalf("%v in:\n%s", err, raw)
	}
	if got[0] != 1 || got[1] != 2 || got[2] != 1 {
		t.Errorf("depth, adds, done = %v, want [1 2 1]", got)
	}
	if _, err := queueMetrics(raw, handlerQueue, "workqueue_no_such_metric"); err == nil {
		t.Error("a missing metric read without an error")
	}
}

// TestReportsConnection matches the line node/monitor logs in klog's text
// format, virt-handler's default.
func TestReportsConnection(t *testing.T) {
	var buf bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&buf)))
	logger.WithValues("vmi", "e2e-x/vm-always", "pod", "0f6c").Info("Connected to launcher", "launcherVersion", "v1")
	line := buf.String()
	if !reportsConnection(line, "e2e-x/vm-always") {
		t.Errorf("no connection to e2e-x/vm-always in %q", line)
	}
	if reportsConnection(line, "e2e-x/vm") {
		t.Errorf("a connection to e2e-x/vm in %q", line)
	}
}
