package cli_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

func (a *fakeAPI) withDiscovery(virtUp bool) *fakeAPI {
	a.mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, &version.Info{GitVersion: "v1.37.1"})
	})
	a.mux.HandleFunc("GET "+group, func(w http.ResponseWriter, r *http.Request) {
		if !virtUp {
			writeStatus(w, &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusServiceUnavailable,
				Reason: metav1.StatusReasonServiceUnavailable, Message: "service unavailable"})
			return
		}
		list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "virtualization.kubevirt.io/v1"}
		for _, n := range []string{"virtualmachines", "virtualmachines/status", "virtualmachines/stop", "virtualmachines/start",
			"virtualmachineinstances", "virtualmachineinstances/console", "virtualmachineinstances/vnc"} {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: n, Namespaced: true})
		}
		writeJSON(w, http.StatusOK, list)
	})
	return a
}

func TestVersion(t *testing.T) {
	a := newFakeAPI(t).withDiscovery(true)
	res := a.run(nil, "version")
	if res.err != nil {
		t.Fatal(res.err)
	}
	lines := strings.Split(strings.TrimSpace(res.out), "\n")
	want := []string{
		"Client Version: ",
		"Server Version: Kubernetes v1.37.1 at " + a.srv.URL,
		"virt-apiserver: serves virtualization.kubevirt.io/v1: virtualmachineinstances (console, vnc), virtualmachines (start, status, stop)",
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s\nwant %d lines", res.out, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d: %q, want %q", i, lines[i], want[i])
		}
	}
}

func TestVersionClientOnly(t *testing.T) {
	a := newFakeAPI(t)
	res := a.run(nil, "version", "--client")
	if res.err != nil || !strings.HasPrefix(res.out, "Client Version: ") || strings.Count(res.out, "\n") != 1 {
		t.Errorf("output %q, error %v; want the client's version only", res.out, res.err)
	}
	if len(a.requests) != 0 {
		t.Errorf("requests %v, want none", a.requests)
	}
}

func TestVersionVirtAPIServerDown(t *testing.T) {
	a := newFakeAPI(t).withDiscovery(false)
	res := a.run(nil, "version")
	if res.err == nil || !strings.Contains(res.err.Error(), "virt-apiserver does not answer for virtualization.kubevirt.io/v1") {
		t.Errorf("error %v, want virt-apiserver's absence", res.err)
	}
	if !strings.Contains(res.out, "virt-apiserver: not reachable: service unavailable") {
		t.Errorf("output %q, want the reason", res.out)
	}
}
