package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"vetlens/internal/lanaddr"
)

// listenSettingFile holds, in the data directory, whether the desktop
// serves the HTTPS API and on which address, as the Server tab last left
// it: it travels with the data (backups, a move to another machine).
const listenSettingFile = "listener.json"

// listenSetting is the persisted listener setting.
type listenSetting struct {
	Serve bool   `json:"serve"`
	Addr  string `json:"addr"`
}

// defaultListenSetting is a fresh data directory's: serving this
// computer only. Nothing is exposed to the clinic network until someone
// chooses to (Server tab, or --addr).
func defaultListenSetting() listenSetting {
	return listenSetting{Serve: true, Addr: lanaddr.Local(lanaddr.DefaultPort)}
}

// loadListenSetting reads DIR/listener.json; found is false when there is
// none yet.
func loadListenSetting(dir string) (s listenSetting, found bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, listenSettingFile))
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("listener setting: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, false, fmt.Errorf("listener setting %s: %w", filepath.Join(dir, listenSettingFile), err)
	}
	if _, err := lanaddr.Port(s.Addr); err != nil {
		return s, false, fmt.Errorf("listener setting %s: %w", filepath.Join(dir, listenSettingFile), err)
	}
	return s, true, nil
}

// saveListenSetting writes DIR/listener.json atomically (a temporary file
// renamed into place).
func saveListenSetting(dir string, s listenSetting) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("listener setting: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".listener-*.json")
	if err != nil {
		return fmt.Errorf("listener setting: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("listener setting: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("listener setting: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, listenSettingFile)); err != nil {
		return fmt.Errorf("listener setting: %w", err)
	}
	return nil
}
