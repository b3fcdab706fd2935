//go:build windows

package adminsock

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// native: loopback TCP with a token (a unix socket's 0600 has no
// equivalent a Windows client can rely on).
const native = KindLoopback

// createPrivate creates a new file whose security descriptor, set at
// creation (so there is no moment with the folder's inherited ACL), is a
// protected DACL granting the current user alone full access: the
// AppData folder's ACL would otherwise also let SYSTEM and the
// Administrators group read the token, and a data directory placed
// elsewhere (--data-dir) could let every user read it.
func createPrivate(path string) (*os.File, error) {
	tok, err := windows.OpenCurrentProcessToken()
	if err != nil {
		return nil, fmt.Errorf("process token: %w", err)
	}
	defer tok.Close()
	user, err := tok.GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("process user: %w", err)
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;" + user.User.Sid.String() + ")")
	if err != nil {
		return nil, fmt.Errorf("security descriptor: %w", err)
	}
	sa := windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(sa))
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_WRITE, 0, &sa, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
