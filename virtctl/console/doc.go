// Package console reaches a VMI's serial console: it waits for the VMI to
// run, opens the console stream (Dial) and joins it to a terminal until
// the person types the escape byte, Ctrl+] (Attach).
//
// Dial is what an end-to-end test uses to drive a guest's console without
// a pty. Terminal modes (raw, restore on interrupt) belong to the command
// that owns the terminal, not to this package.
package console
