package guestaccess

import (
	"net/http"
	"strings"
	"testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

func TestPauseUnpauseSoftReboot(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	fake, l := f.launch(g)
	uid := string(g.vmi.UID)

	steps := []struct {
		action  string
		want    int32
		wantMsg string
		wantDom apiv1.DomainState
	}{
		{action: "unpause", want: http.StatusConflict, wantMsg: "VMI vm is not paused"},
		{action: "pause", want: http.StatusOK, wantDom: apiv1.DomainState_DOMAIN_STATE_PAUSED},
		{action: "pause", want: http.StatusConflict, wantMsg: "VMI vm is already paused"},
		{action: "softreboot", want: http.StatusConflict, wantMsg: "VMI vm is paused"},
		{action: "unpause", want: http.StatusOK, wantDom: apiv1.DomainState_DOMAIN_STATE_RUNNING},
		{action: "softreboot", want: http.StatusOK},
	}
	for _, s := range steps {
		st := f.put(f.url("https", "ns", "vm", s.action, uid))
		if st.Code != s.want || !strings.Contains(st.Message, s.wantMsg) {
			t.Fatalf("%s answered %+v, want %d %q", s.action, st, s.want, s.wantMsg)
		}
		if s.wantDom != apiv1.DomainState_DOMAIN_STATE_UNSPECIFIED {
			// The watch reports the state, as it does into the VMI status.
			eventually(t, "domain "+s.wantDom.String(), func() bool { return l.State().Domain.GetState() == s.wantDom })
		}
	}
	if c := fake.Calls(); c.Pause != 1 || c.Unpause != 1 || c.SoftReboot != 1 {
		t.Errorf("launcher calls = %+v, want one Pause, one Unpause, one SoftReboot (refusals never reach it)", c)
	}
}

func TestActionsFindTheVMI(t *testing.T) {
	f := newFixture(t)
	running := f.addVMI("vm", virtv1.Running)
	fake, _ := f.launch(running)
	f.addVMI("starting", virtv1.Scheduled)
	other := f.addVMI("elsewhere", virtv1.Running)
	other.vmi.Status.NodeName = "node-2"
	if err := f.vmis.Update(other.vmi); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, vmi, uid string
		want           int32
		wantMsg        string
	}{
		{name: "unknown VMI", vmi: "missing", uid: "missing-uid", want: http.StatusNotFound},
		{name: "uid mismatch: a newer VMI of the name", vmi: "vm", uid: "old-uid", want: http.StatusNotFound, wantMsg: "old-uid"},
		{name: "another node's VMI", vmi: "elsewhere", uid: "elsewhere-uid", want: http.StatusNotFound},
		{name: "not running", vmi: "starting", uid: "starting-uid", want: http.StatusConflict, wantMsg: "VMI starting is not running (phase Scheduled)"},
		{name: "no uid", vmi: "vm", uid: "", want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := f.put(f.url("https", "ns", tt.vmi, "pause", tt.uid))
			if st.Code != tt.want || !strings.Contains(st.Message, tt.wantMsg) {
				t.Errorf("pause answered %+v, want %d %q", st, tt.want, tt.wantMsg)
			}
		})
	}
	if c := fake.Calls(); c.Pause != 0 {
		t.Errorf("launcher got %d Pause calls, want none", c.Pause)
	}

	f.synced.Store(false)
	if st := f.put(f.url("https", "ns", "vm", "pause", string(running.vmi.UID))); st.Code != http.StatusServiceUnavailable {
		t.Errorf("pause before the caches synced answered %+v, want 503", st)
	}
}

func TestActionWithoutLauncherConnection(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	if st := f.put(f.url("https", "ns", "vm", "pause", string(g.vmi.UID))); st.Code != http.StatusServiceUnavailable {
		t.Errorf("pause of a VMI whose launcher is not watched answered %+v, want 503", st)
	}
}
