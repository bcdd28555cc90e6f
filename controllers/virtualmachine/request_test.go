package virtualmachine

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func requests(reqs ...virtv1.VirtualMachineStateChangeRequest) func(*virtv1.VirtualMachine) {
	return func(vm *virtv1.VirtualMachine) { vm.Status.StateChangeRequests = reqs }
}

func stopReq(uid types.UID) virtv1.VirtualMachineStateChangeRequest {
	r := virtv1.VirtualMachineStateChangeRequest{Action: virtv1.StopRequest}
	if uid != "" {
		r.UID = &uid
	}
	return r
}

var startReq = virtv1.VirtualMachineStateChangeRequest{Action: virtv1.StartRequest}

// describe writes requests as "Stop:uid,Start".
func describe(reqs []virtv1.VirtualMachineStateChangeRequest) string {
	var s []string
	for _, r := range reqs {
		d := string(r.Action)
		if r.UID != nil {
			d += ":" + string(*r.UID)
		}
		s = append(s, d)
	}
	return strings.Join(s, ",")
}

// TestStateChangeRequests: one sync acts on the first request the API
// left for it, and drops it once done.
func TestStateChangeRequests(t *testing.T) {
	running := synced(virtv1.VirtualMachineStatusRunning)
	stopped := synced(virtv1.VirtualMachineStatusStopped)
	tests := []struct {
		name string
		vm   *virtv1.VirtualMachine
		// vmi is the VM's instance ("vmi-uid") in this phase; "" for none.
		vmi      virtv1.VirtualMachineInstancePhase
		deleting bool
		want     outcome
		// left are the requests after the sync.
		left string
	}{
		{name: "stop deletes the instance it names", vm: newVM(virtv1.RunStrategyManual, running, requests(stopReq("vmi-uid"))),
			vmi: virtv1.Running, want: deleted},
		{name: "stop of no particular instance deletes the one there is", vm: newVM(virtv1.RunStrategyManual, running, requests(stopReq(""))),
			vmi: virtv1.Running, want: deleted},
		{name: "stop of an instance that is gone is done", vm: newVM(virtv1.RunStrategyManual, running, requests(stopReq("old-uid"))),
			vmi: virtv1.Running, want: kept},
		{name: "stop of an instance being deleted is done", vm: newVM(virtv1.RunStrategyManual, running, requests(stopReq("vmi-uid"))),
			vmi: virtv1.Running, deleting: true, want: kept},
		{name: "stop without an instance is done", vm: newVM(virtv1.RunStrategyManual, stopped, requests(stopReq("vmi-uid"))),
			want: none},
		{name: "restart: the stop first", vm: newVM(virtv1.RunStrategyManual, running, requests(stopReq("vmi-uid"), startReq)),
			vmi: virtv1.Running, want: deleted, left: "Start"},
		{name: "restart of Always: the stop first", vm: newVM(virtv1.RunStrategyAlways, running, requests(stopReq("vmi-uid"), startReq)),
			vmi: virtv1.Running, want: deleted, left: "Start"},
		{name: "restart of a RerunOnFailure VM that shut down", vm: newVM(virtv1.RunStrategyRerunOnFailure, stopped, requests(stopReq("vmi-uid"), startReq)),
			vmi: virtv1.Succeeded, want: deleted, left: "Start"},
		{name: "start waits for the old instance to go", vm: newVM(virtv1.RunStrategyManual, running, requests(startReq)),
			vmi: virtv1.Running, deleting: true, want: kept, left: "Start"},
		{name: "start creates the instance of a stopped Manual VM", vm: newVM(virtv1.RunStrategyManual, stopped, requests(startReq)),
			want: created},
		{name: "start with an instance is done", vm: newVM(virtv1.RunStrategyManual, running, requests(startReq)),
			vmi: virtv1.Running, want: kept},
		{name: "start does not wait for the back-off", vm: newVM(virtv1.RunStrategyRerunOnFailure, failures(2, now.Add(time.Minute)), requests(startReq)),
			want: created},
		{name: "Halted drops the requests", vm: newVM(virtv1.RunStrategyHalted, stopped, requests(startReq)),
			want: none},
		{name: "a VM being deleted drops the requests", vm: newVM(virtv1.RunStrategyManual, running, requests(startReq), func(vm *virtv1.VirtualMachine) {
			vm.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			vm.Finalizers = []string{"foregroundDeletion"}
		}), vmi: virtv1.Running, want: deleted},
		{name: "an unknown action is dropped", vm: newVM(virtv1.RunStrategyManual, stopped, requests(virtv1.VirtualMachineStateChangeRequest{Action: "Reboot"}, startReq)),
			want: created},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vmi *virtv1.VirtualMachineInstance
			if tt.vmi != "" {
				vmi = instance(tt.vm, tt.vmi, ranFor(time.Hour))
				if tt.deleting {
					vmiDeleting(vmi)
				}
			}
			f := newFixture(t, tt.vm, vmi)
			if err := f.sync(tt.vm); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got := f.vmi()
			expectInstance(t, tt.want, vmi, got)
			if left := describe(f.vm().Status.StateChangeRequests); left != tt.left {
				t.Errorf("requests left %q, want %q", left, tt.left)
			}
		})
	}
}

// TestRestartAcrossSyncs follows a restart of a Manual VM: the old instance
// is deleted, the new one created once the old one is gone, and no request
// is left.
func TestRestartAcrossSyncs(t *testing.T) {
	vm := newVM(virtv1.RunStrategyManual, synced(virtv1.VirtualMachineStatusRunning), requests(stopReq("vmi-uid"), startReq))
	old := instance(vm, virtv1.Running, ranFor(time.Hour))
	f := newFixture(t, vm, old)
	if err := f.sync(vm); err != nil {
		t.Fatal(err)
	}
	if f.vmi() != nil {
		t.Fatal("the old instance was not deleted")
	}
	// The informers see the deletion and the VM's status write.
	f.ctrl.deleteVMI(old)
	if err := f.vmis.Delete(old); err != nil {
		t.Fatal(err)
	}
	vm = f.vm()
	if err := f.vms.Update(vm); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(vm); err != nil {
		t.Fatal(err)
	}
	got := f.vmi()
	if got == nil || got.UID == old.UID {
		t.Fatalf("no new instance: %v", got)
	}
	status := f.vm().Status
	if len(status.StateChangeRequests) != 0 || status.PrintableStatus != virtv1.VirtualMachineStatusStarting {
		t.Errorf("after the restart: requests %q, printableStatus %s; want none, Starting", describe(status.StateChangeRequests), status.PrintableStatus)
	}
}
