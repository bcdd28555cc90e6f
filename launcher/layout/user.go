package layout

// DefaultRunAsUser is the UID, GID and fsGroup launcher pods run as unless
// virt-controller is told otherwise. virt-handler prepares the node's
// directories the launchers write (the capabilities cache) for the same
// user, so the two defaults must be this one constant.
const DefaultRunAsUser int64 = 107
