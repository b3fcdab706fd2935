//go:build windows

package printing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// System is this system's printing: the Windows shell.
type System = Shell

// Shell prints a PDF the way Explorer's "Print" does: ShellExecute with
// the "print" verb (the default printer) or "printto" (a named one),
// which runs the print command the installed PDF program registers for
// .pdf files. Windows itself has no PDF printing command; a computer
// whose PDF viewer registers no print verb (a browser set as the PDF
// viewer may not) cannot print from here, and Ready says so.
type Shell struct {
	// Destination is the printer's name as Windows shows it; empty: the
	// default printer.
	Destination string
}

var (
	shlwapi           = windows.NewLazySystemDLL("shlwapi.dll")
	procAssocQueryStr = shlwapi.NewProc("AssocQueryStringW")
	winspool          = windows.NewLazySystemDLL("winspool.drv")
	procGetDefaultPrn = winspool.NewProc("GetDefaultPrinterW")
	procOpenPrinter   = winspool.NewProc("OpenPrinterW")
	procClosePrinter  = winspool.NewProc("ClosePrinter")
)

// noPDFPrinting is why Print is off where no program prints PDF files.
const noPDFPrinting = "no program on this computer prints PDF files (a PDF reader that can print is needed): ask whoever looks after it"

// assocStrCommand is ASSOCSTR_COMMAND: the command line of a verb.
const assocStrCommand = 1

// verb is the shell verb Print uses.
func (s Shell) verb() string {
	if s.Destination != "" {
		return "printto"
	}
	return "print"
}

// Ready reports whether printing can work: a program prints PDF files
// (the .pdf type has the verb), and Windows has a default printer (or the
// named one).
func (s Shell) Ready() (ok bool, why string) { return ready(s, s.Destination) }

func (s Shell) missing() string {
	ext, _ := windows.UTF16PtrFromString(".pdf")
	verb, _ := windows.UTF16PtrFromString(s.verb())
	var n uint32
	// S_OK or S_FALSE (the size only, no buffer given): the verb exists.
	if r, _, _ := procAssocQueryStr.Call(0, assocStrCommand, uintptr(unsafe.Pointer(ext)), uintptr(unsafe.Pointer(verb)), 0, uintptr(unsafe.Pointer(&n))); r > 1 {
		return noPDFPrinting
	}
	return ""
}

func (s Shell) hasDestination(_ context.Context, name string) bool {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return false
	}
	var h windows.Handle
	if r, _, _ := procOpenPrinter.Call(uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&h)), 0); r == 0 {
		return false
	}
	procClosePrinter.Call(uintptr(h))
	return true
}

// hasDefault: GetDefaultPrinterW without a buffer fails with
// ERROR_INSUFFICIENT_BUFFER when there is a default printer to return,
// ERROR_FILE_NOT_FOUND when there is none.
func (s Shell) hasDefault(context.Context) bool {
	var n uint32
	_, _, err := procGetDefaultPrn.Call(0, uintptr(unsafe.Pointer(&n)))
	return errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER)
}

// spoolKeep is how long a copy handed to the PDF program is kept.
const spoolKeep = time.Hour

// Print copies the file to VetLens's print folder in %TEMP% (the caller
// removes its own as soon as Print returns, but the PDF program opens it
// later) and asks the shell to print the copy, minimised. The shell only
// starts the program: there is no job id, and a failure after the start
// shows in that program, not here. Copies older than spoolKeep are
// removed at each Print.
func (s Shell) Print(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	spool := filepath.Join(os.TempDir(), "vetlens-print")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return "", fmt.Errorf("print: %w", err)
	}
	removeOld(spool, time.Now().Add(-spoolKeep))
	cp := filepath.Join(spool, strconv.FormatInt(time.Now().UnixNano(), 36)+filepath.Ext(path))
	if err := copyFile(cp, path); err != nil {
		return "", fmt.Errorf("print: %w", err)
	}
	args := ""
	if s.Destination != "" {
		args = `"` + s.Destination + `"`
	}
	if err := shellExecute(s.verb(), cp, args, spool); err != nil {
		os.Remove(cp)
		return "", fmt.Errorf("print: %s %s: %w", s.verb(), path, err)
	}
	if s.Destination != "" {
		return "printing on " + s.Destination, nil
	}
	return "printing on the default printer", nil
}

// shellExecute runs ShellExecute on a thread with COM initialised, as
// its documentation asks (a verb's handler may be a COM or DDE server).
func shellExecute(verb, file, args, dir string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// S_FALSE (already initialised on this thread) is counted too.
	if err := windows.CoInitializeEx(0, windows.COINIT_APARTMENTTHREADED|windows.COINIT_DISABLE_OLE1DDE); err == nil || err == windows.Errno(windows.S_FALSE) {
		defer windows.CoUninitialize()
	}
	v, err := windows.UTF16PtrFromString(verb)
	if err != nil {
		return err
	}
	f, err := windows.UTF16PtrFromString(file)
	if err != nil {
		return err
	}
	d, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	var a *uint16
	if args != "" {
		if a, err = windows.UTF16PtrFromString(args); err != nil {
			return err
		}
	}
	return windows.ShellExecute(0, v, f, a, d, windows.SW_SHOWMINNOACTIVE)
}

// copyFile copies src to a new file dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeOld removes the files in dir last changed before t.
func removeOld(dir string, t time.Time) {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().Before(t) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
