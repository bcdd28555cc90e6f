package reliability

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/test/badinput"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/report"
)

// badInputTimeout bounds one bad request: the aggregator's own limit on a
// proxied request is 60 s.
const badInputTimeout = 70 * time.Second

// TestBadInput: the bad-input corpus of test/badinput, sent through the
// kube-apiserver's aggregator to the deployed virt-apiserver. Every answer
// is a refusal as the client's fault, or the taking of an input that may be
// taken, examined (badinput.Judge); never a server error; the server does
// not panic and does not restart.
func TestBadInput(t *testing.T) {
	fig := book.Start(t, "bad-input", "Bad input through the real server")
	fig.Fault = `Random and malformed VMI bodies (test/badinput, the in-process
integration test's corpus): the fuzzer's seeds, deep nesting, huge strings,
bodies at and past the 3 MiB limit, invalid UTF-8, duplicate keys, numbers
out of range, garbage protobuf, and 300 seeded random mutations of a valid
VMI, posted to the VMI collection, put to a VMI and its status, and patched
into it in every patch type.`
	fig.Load = `One request after the other, as the admin through the kube-apiserver's
aggregator to the deployed virt-apiserver, in a namespace whose quota
allows no pod (what the server accepts never starts a launcher).`
	fig.Method = `Each answer is classified: a refusal as the client's fault (400, 413, 415
for a media type the server does not take, 422, and 409 for a PUT or patch
racing the target's resourceVersion); a success (2xx), which is examined:
it is right only for an input that may be taken — a random variation or
corpus entry that is still a well-formed VMI (the object it asks for
decodes as a VirtualMachineInstance, valid UTF-8, a field unknown or given
twice dropped only with a warning and never under
` + "`fieldValidation=Strict`" + `), or a hand-written case that is valid — and the
answer must be that VMI; a malformed input taken is a finding. Anything
else is counted against the server. Two defects of the upstream patch code used to
be such failures and are refused as the client's fault now
(apiserver/patchguard): server-side apply's 500 on an object that does not
fit the schema (now 422) and the strategic-merge and JSON-patch code
panicking on some malformed patches (now 400). Panics are read from
virt-apiserver's log through the API after the run (entries with "panic",
as the apiserver's recovery logs them).`
	ctx := t.Context()
	servers := apiServerPods(t)
	ns := cluster.Namespace(t)
	_, err := cluster.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set := badinput.Set{Namespace: ns}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, set.Target(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cases, err := set.All(cluster.Root)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = badInputTimeout

	since := metav1.NewTime(time.Now().Add(-time.Second))
	statuses := map[int]int{}
	var unexpected, wrongRefusals, wrongTakings, slow []string
	taken := 0
	serverErrors, transportErrors := 0, 0
	began := time.Now()
	for _, c := range cases {
		sent := time.Now()
		a, err := set.Send(ctx, hc, cluster.Config.Host, c)
		if d := time.Since(sent); d > 2*time.Second {
			slow = append(slow, fmt.Sprintf("%s: %s", badinput.Describe(c), d.Round(100*time.Millisecond)))
		}
		what := badinput.Describe(c)
		switch {
		case err != nil:
			transportErrors++
			unexpected = append(unexpected, fmt.Sprintf("%s: %v; body %s", what, err, badinput.Truncate(a.Sent)))
		case a.Code >= 500:
			statuses[a.Code]++
			serverErrors++
			unexpected = append(unexpected, fmt.Sprintf("%s -> %d %s; body %s", what, a.Code, badinput.Truncate(a.Body), badinput.Truncate(a.Sent)))
		case a.Code < 300:
			statuses[a.Code]++
			taken++
			if err := badinput.Judge(c, a); err != nil {
				wrongTakings = append(wrongTakings, fmt.Sprintf("%s: %v; body %s", what, err, badinput.Truncate(a.Sent)))
			}
		default:
			statuses[a.Code]++
			if err := badinput.Judge(c, a); err != nil {
				wrongRefusals = append(wrongRefusals, fmt.Sprintf("%s -> %d %s", what, a.Code, badinput.Truncate(a.Body)))
			}
		}
	}
	took := time.Since(began)
	for _, u := range unexpected {
		t.Errorf("unexpected answer: %s", u)
	}
	for _, w := range wrongRefusals {
		t.Errorf("a refusal of the wrong kind: %s", w)
	}
	for _, w := range wrongTakings {
		t.Errorf("an input taken that must be refused: %s", w)
	}
	panics, restarts := 0, 0
	for _, pod := range servers {
		cur, err := cluster.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		restarts += int(framework.RestartCount(cur, apiServerContainer) - framework.RestartCount(&pod, apiServerContainer))
		entries, err := panicsLogged(ctx, cur, since)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			panics++
			t.Errorf("virt-apiserver %s logged a panic: %s", pod.Name, badinput.Truncate([]byte(e)))
		}
	}
	fig.Add(
		report.Count("requests", len(cases), report.Measured()),
		report.Count("5xx answers", serverErrors, report.MustBe(0)),
		report.Count("requests without an answer", transportErrors, report.MustBe(0)),
		report.Count("panics in virt-apiserver's log", panics, report.MustBe(0)),
		report.Count("refusals other than 400, 409, 413, 415, 422", len(wrongRefusals), report.MustBe(0)),
		report.Count("answers taken (2xx), each examined", taken, report.Measured()),
		report.Count("malformed inputs taken, or taken wrongly", len(wrongTakings), report.MustBe(0)),
		report.Count("virt-apiserver restarts", restarts, report.MustBe(0)),
	)
	fig.Note("%d requests in %s; answers by status: %s.", len(cases), took.Round(time.Second), statusString(statuses))
	for i, s := range slow {
		if i == 10 {
			fig.Note("... and %d more requests slower than 2 s", len(slow)-10)
			break
		}
		fig.Note("slow: %s", s)
	}
	for i, u := range slices.Concat(unexpected, wrongTakings) {
		if i == 10 {
			fig.Note("... and %d more failures", len(unexpected)+len(wrongTakings)-10)
			break
		}
		fig.Note("failure: %s", u)
	}
}

// apiServerPods returns the virt-apiserver pods, each Ready.
func apiServerPods(t *testing.T) []corev1.Pod {
	t.Helper()
	if _, err := cluster.WaitPodReady(t.Context(), virtSystem, apiServerSelector, "", componentTimeout); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitAPIServiceAvailable(t.Context(), apiService, componentTimeout); err != nil {
		t.Fatal(err)
	}
	pods, err := cluster.Kube.CoreV1().Pods(virtSystem).List(t.Context(), metav1.ListOptions{LabelSelector: apiServerSelector})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// klogEntry starts a klog text entry: severity, date, time.
var klogEntry = regexp.MustCompile(`^[IWEF]\d{4} \d\d:\d\d:\d\d`)

// panicsLogged returns the entries of a virt-apiserver's log since since
// (of its current and, after a restart, its previous container) that tell
// of a panic; an entry is a klog line with the lines that follow it (a
// stack).
func panicsLogged(ctx context.Context, pod *corev1.Pod, since metav1.Time) ([]string, error) {
	var out []string
	for _, previous := range []bool{false, true} {
		if previous && framework.RestartCount(pod, apiServerContainer) == 0 {
			continue
		}
		stream, err := cluster.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container: apiServerContainer, SinceTime: &since, Previous: previous,
		}).Stream(ctx)
		if err != nil {
			if previous {
				continue // no previous container's log left
			}
			return nil, fmt.Errorf("read the log of %s: %w", pod.Name, err)
		}
		sc := bufio.NewScanner(stream)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		var entry strings.Builder
		flush := func() {
			if e := entry.String(); strings.Contains(strings.ToLower(e), "panic") {
				out = append(out, e)
			}
			entry.Reset()
		}
		for sc.Scan() {
			line := sc.Text()
			if klogEntry.MatchString(line) || strings.HasPrefix(line, "{") {
				flush()
			}
			entry.WriteString(line + "\n")
		}
		flush()
		err = sc.Err()
		stream.Close()
		if err != nil {
			return nil, fmt.Errorf("read the log of %s: %w", pod.Name, err)
		}
	}
	return out, nil
}

func statusString(m map[int]int) string {
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s: %d", code, http.StatusText(code), m[code]))
	}
	return strings.Join(parts, ", ")
}
