package eviction

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func launcherPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm1-abcde", UID: "pod-1",
			Labels:          map[string]string{virtv1.ComponentLabel: virtv1.LauncherComponent},
			OwnerReferences: []metav1.OwnerReference{{Kind: "VirtualMachineInstance", Name: "vm1", UID: "vmi-1", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-a"},
	}
}

func runningVMI(strategy virtv1.EvictionStrategy, migratable corev1.ConditionStatus) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm1", UID: "vmi-1"},
		Spec:       virtv1.VirtualMachineInstanceSpec{EvictionStrategy: &strategy},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Running, NodeName: "node-a",
			ActivePods: map[types.UID]string{"pod-1": "node-a"}},
	}
	if migratable != "" {
		c := virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceIsMigratable, Status: migratable}
		if migratable == corev1.ConditionFalse {
			c.Reason, c.Message = "DisksNotLiveMigratable", "volume data: claim local is not ReadWriteMany"
		}
		vmi.Status.Conditions = append(vmi.Status.Conditions, c)
	}
	return vmi
}

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		name        string
		vmi         *virtv1.VirtualMachineInstance
		pod         func(*corev1.Pod)
		wantAllowed bool
		wantMark    bool
		wantMsg     string
	}{
		{name: "LiveMigrate, migratable", vmi: runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue),
			wantMark: true, wantMsg: "Eviction triggered evacuation of VMI ns/vm1"},
		{name: "LiveMigrate, not migratable: blocked, saying why", vmi: runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionFalse),
			wantMsg: "cannot be live-migrated: volume data: claim local is not ReadWriteMany"},
		{name: "LiveMigrate, not known yet", vmi: runningVMI(virtv1.EvictionStrategyLiveMigrate, ""), wantMsg: "not computed yet"},
		{name: "LiveMigrateIfPossible, migratable", vmi: runningVMI(virtv1.EvictionStrategyLiveMigrateIfPossible, corev1.ConditionTrue),
			wantMark: true, wantMsg: "evacuation"},
		{name: "LiveMigrateIfPossible, not migratable: stopped", vmi: runningVMI(virtv1.EvictionStrategyLiveMigrateIfPossible, corev1.ConditionFalse),
			wantAllowed: true},
		{name: "External: marked whatever it can do", vmi: runningVMI(virtv1.EvictionStrategyExternal, corev1.ConditionFalse),
			wantMark: true, wantMsg: "evacuation"},
		{name: "None", vmi: runningVMI(virtv1.EvictionStrategyNone, corev1.ConditionTrue), wantAllowed: true},
		{name: "no strategy", vmi: func() *virtv1.VirtualMachineInstance {
			v := runningVMI("", corev1.ConditionTrue)
			v.Spec.EvictionStrategy = nil
			return v
		}(), wantAllowed: true},
		{name: "VMI gone", vmi: nil, wantAllowed: true},
		{name: "VMI ended", vmi: func() *virtv1.VirtualMachineInstance {
			v := runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue)
			v.Status.Phase = virtv1.Succeeded
			return v
		}(), wantAllowed: true},
		{name: "the pod the guest left", vmi: func() *virtv1.VirtualMachineInstance {
			v := runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue)
			v.Status.ActivePods = map[types.UID]string{"pod-2": "node-b"}
			v.Status.NodeName = "node-b"
			return v
		}(), wantAllowed: true},
		{name: "the target pod", vmi: func() *virtv1.VirtualMachineInstance {
			v := runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue)
			v.Status.ActivePods["pod-1"] = "node-a"
			v.Status.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{TargetPod: "virt-launcher-vm1-abcde"}
			return v
		}(), wantAllowed: true},
		{name: "pod already terminating", vmi: runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue),
			pod: func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }, wantAllowed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := launcherPod()
			if tt.pod != nil {
				tt.pod(pod)
			}
			d := Decide(pod, tt.vmi)
			if d.Allowed != tt.wantAllowed || d.Mark != tt.wantMark || !strings.Contains(d.Message, tt.wantMsg) {
				t.Errorf("Decide = %+v, want allowed %v, mark %v, message with %q", d, tt.wantAllowed, tt.wantMark, tt.wantMsg)
			}
			if d.Mark && d.Node != "node-a" {
				t.Errorf("marks node %q, want node-a", d.Node)
			}
		})
	}
}

type fakeVMIs struct {
	vmi   *virtv1.VirtualMachineInstance
	marks []string
}

func (f *fakeVMIs) Get(_ context.Context, namespace, name string) (*virtv1.VirtualMachineInstance, error) {
	if f.vmi == nil || f.vmi.Namespace != namespace || f.vmi.Name != name {
		return nil, apierrors.NewNotFound(virtv1.Resource("virtualmachineinstances"), name)
	}
	return f.vmi.DeepCopy(), nil
}

func (f *fakeVMIs) MarkEvacuation(_ context.Context, namespace, name string, uid types.UID, node string) error {
	f.marks = append(f.marks, namespace+"/"+name+"@"+node)
	f.vmi.Status.EvacuationNodeName = node
	return nil
}

func post(t *testing.T, h http.Handler, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("response %s: %v", rec.Body, err)
	}
	if review.Response.UID != req.UID {
		t.Errorf("response UID %q, want %q", review.Response.UID, req.UID)
	}
	return review.Response
}

func evictionRequest(name string, dryRun bool) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{UID: "req-1", Namespace: "ns", Name: name, Operation: admissionv1.Create,
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, SubResource: "eviction", DryRun: &dryRun}
}

func TestHandler(t *testing.T) {
	pods := map[string]*corev1.Pod{}
	getPod := func(_ context.Context, namespace, name string) (*corev1.Pod, error) {
		if p, ok := pods[namespace+"/"+name]; ok {
			return p.DeepCopy(), nil
		}
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	}
	pod := launcherPod()
	pods["ns/"+pod.Name] = pod
	pods["ns/web"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	vmis := &fakeVMIs{vmi: runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue)}
	h := New(getPod, vmis)

	// A server-side dry run (kubectl drain --dry-run=server) changes nothing.
	resp := post(t, h, evictionRequest(pod.Name, true))
	if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests || len(vmis.marks) != 0 {
		t.Fatalf("dry run: %+v, marks %v; want 429 and no mark", resp.Result, vmis.marks)
	}
	resp = post(t, h, evictionRequest(pod.Name, false))
	if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests || !strings.Contains(resp.Result.Message, "evacuation of VMI ns/vm1") {
		t.Fatalf("eviction answered %+v, want 429 evacuation", resp.Result)
	}
	if len(vmis.marks) != 1 || vmis.marks[0] != "ns/vm1@node-a" {
		t.Fatalf("marks %v, want ns/vm1@node-a", vmis.marks)
	}
	// kubectl drain retries: still 429, no second write.
	if resp = post(t, h, evictionRequest(pod.Name, false)); resp.Allowed || len(vmis.marks) != 1 {
		t.Errorf("retry: allowed %v, marks %v; want 429 and one mark", resp.Allowed, vmis.marks)
	}
	// The migration removed the source pod: the drain may go on.
	delete(pods, "ns/"+pod.Name)
	if resp = post(t, h, evictionRequest(pod.Name, false)); !resp.Allowed {
		t.Errorf("eviction of a pod that is gone denied: %+v", resp.Result)
	}
	if resp = post(t, h, evictionRequest("web", false)); !resp.Allowed {
		t.Errorf("eviction of a pod that is no launcher denied: %+v", resp.Result)
	}
	other := evictionRequest(pod.Name, false)
	other.SubResource = ""
	other.Operation = admissionv1.Delete
	if resp = post(t, h, other); !resp.Allowed {
		t.Errorf("a request that is no eviction denied: %+v", resp.Result)
	}
}

func TestHandlerRefusesNonReviews(t *testing.T) {
	h := New(nil, &fakeVMIs{})
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, Path, nil),
		httptest.NewRequest(http.MethodPost, Path, strings.NewReader("{")),
		httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"kind":"AdmissionReview"}`)),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusOK {
			t.Errorf("%s %s answered 200", r.Method, r.URL)
		}
	}
}

// TestHandlerCallers: with callers set, only those users reach the
// decision; anyone else, authenticated or not, gets 403 and marks nothing.
func TestHandlerCallers(t *testing.T) {
	pod := launcherPod()
	getPod := func(context.Context, string, string) (*corev1.Pod, error) { return pod.DeepCopy(), nil }
	vmis := &fakeVMIs{vmi: runningVMI(virtv1.EvictionStrategyLiveMigrate, corev1.ConditionTrue)}
	h := New(getPod, vmis, "kube-apiserver-webhook-client")
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: evictionRequest(pod.Name, false)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		user user.Info
		want int
	}{
		{"unauthenticated", nil, http.StatusForbidden},
		{"anonymous", &user.DefaultInfo{Name: user.Anonymous}, http.StatusForbidden},
		{"another user", &user.DefaultInfo{Name: "mallory", Groups: []string{user.SystemPrivilegedGroup}}, http.StatusForbidden},
		{"the kube-apiserver", &user.DefaultInfo{Name: "kube-apiserver-webhook-client"}, http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		if tc.user != nil {
			r = r.WithContext(request.WithUser(r.Context(), tc.user))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.want {
			t.Errorf("%s: HTTP %d (%s), want %d", tc.name, rec.Code, strings.TrimSpace(rec.Body.String()), tc.want)
		}
	}
	if len(vmis.marks) != 1 {
		t.Errorf("marks %v, want one (the kube-apiserver's request only)", vmis.marks)
	}
}
