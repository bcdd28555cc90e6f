// Package screenshot turns the picture the hypervisor takes of a guest's
// screen (libvirt's virDomainScreenshot: PPM from QEMU, PNG from libvirt's
// test driver and newer QEMU) into a PNG, with bounds: the guest chooses
// its resolution, so a picture's size is read from its header and checked
// against MaxPixels before any pixel is allocated, and no more bytes are
// read than such a picture can have.
//
// It knows images only: taking the picture is launcher/hypervisor's, and
// serving it launcher/server's. It must not import anything but the
// standard library.
package screenshot
