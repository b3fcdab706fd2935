// Package assets holds the files VetLens bundles into its binary: the
// application icon (icon.png, drawn by icon_gen.go) and the application
// metadata read from FyneApp.toml, which the fyne tool also reads when it
// packages the app (make package).
package assets

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"image/png"

	"fyne.io/fyne/v2"
	"github.com/BurntSushi/toml"
)

//go:generate go run icon_gen.go

// IconPNG is the application icon, a 512x512 PNG.
//
//go:embed icon.png
var IconPNG []byte

var icon = fyne.NewStaticResource("icon.png", IconPNG)

// Icon is the application icon as a Fyne resource (the window's and the
// app's icon).
func Icon() fyne.Resource { return icon }

// FyneApp is the part of FyneApp.toml the app reads.
type FyneApp struct {
	Details struct {
		Icon, Name, ID, Version string
		Build                   int
	}
}

// ParseFyneApp reads FyneApp.toml; the ID, name, version and icon must be
// set.
func ParseFyneApp(data []byte) (FyneApp, error) {
	var f FyneApp
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return f, fmt.Errorf("FyneApp.toml: %w", err)
	}
	d := f.Details
	if d.ID == "" || d.Name == "" || d.Version == "" || d.Icon == "" {
		return f, errors.New("FyneApp.toml: Details needs ID, Name, Version and Icon")
	}
	return f, nil
}

// Metadata is the Fyne application metadata from FyneApp.toml's
// contents, with Icon as its icon. `fyne package` builds the same
// metadata into the binaries it packages.
func Metadata(fyneAppTOML []byte) (fyne.AppMetadata, error) {
	f, err := ParseFyneApp(fyneAppTOML)
	if err != nil {
		return fyne.AppMetadata{}, err
	}
	if _, err := png.DecodeConfig(bytes.NewReader(IconPNG)); err != nil {
		return fyne.AppMetadata{}, fmt.Errorf("icon.png: %w", err)
	}
	d := f.Details
	return fyne.AppMetadata{ID: d.ID, Name: d.Name, Version: d.Version, Build: d.Build, Icon: Icon()}, nil
}
