package virtualmachineinstance

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/node/vmistatus"
)

// ReasonGuestReportCut is the warning that what a guest (its agent) or its
// launcher reported did not fit the VMI's status and was dropped or cut.
const ReasonGuestReportCut = "GuestReportCut"

// guestReportEventInterval is the least time between two GuestReportCut
// events of one VMI. A guest decides what it reports and how often it
// changes (its agent is asked every 10 s), so without a bound a hostile one
// would write an event per report; the event says only that the guest
// misbehaves and how, which one every few minutes says as well.
const guestReportEventInterval = 5 * time.Minute

// guestReportWarner emits GuestReportCut events: once for a VMI's first
// report that lost something, then only when what was lost changed and
// guestReportEventInterval has passed since the last one. client-go's
// recorder aggregates and rate-limits too, per message; this holds also for
// a guest whose every report differs.
type guestReportWarner struct {
	mu   sync.Mutex
	last map[string]guestReportEvent
}

type guestReportEvent struct {
	message string
	at      time.Time
}

// warnGuestReport records that vmi's status dropped what dropped says, at now.
func (c *Controller) warnGuestReport(vmi *virtv1.VirtualMachineInstance, dropped *vmistatus.Dropped, now time.Time) {
	if dropped.Empty() {
		return
	}
	w := &c.guestReports
	msg := "The guest's report does not fit the VMI's status (the bounds of the API): " + dropped.String()
	key := vmi.Namespace + "/" + vmi.Name
	w.mu.Lock()
	last, seen := w.last[key]
	due := !seen || last.message != msg && now.Sub(last.at) >= guestReportEventInterval
	if due {
		if w.last == nil {
			w.last = map[string]guestReportEvent{}
		}
		w.last[key] = guestReportEvent{message: msg, at: now}
	}
	w.mu.Unlock()
	if due {
		c.recorder.Event(vmi, corev1.EventTypeWarning, ReasonGuestReportCut, msg)
	}
}

// forgetGuestReport drops what is remembered of a VMI that is gone.
func (c *Controller) forgetGuestReport(key string) {
	w := &c.guestReports
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}
