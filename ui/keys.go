package ui

import (
	"context"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// keyOpTimeout bounds one key administration call (a local database
// transaction).
const keyOpTimeout = 10 * time.Second

// keysTab is the keys part of the Server tab: create (the key is shown
// once, with a copy button), list with this month's usage, tier and
// charges, revoke.
type keysTab struct {
	u       *UI
	content fyne.CanvasObject

	customer *widget.Entry
	tier     *widget.Select
	create   *widget.Button
	// newKey shows a created key once, selectable, in the text colour
	// (a disabled entry greyed it out).
	newKey  *widget.Label
	copyKey *widget.Button
	status  *widget.Label
	list    *fyne.Container
}

func newKeysTab(u *UI) *keysTab {
	k := &keysTab{u: u, customer: widget.NewEntry(), status: newValueLabel(""), newKey: widget.NewLabel(""), list: container.NewVBox()}
	k.customer.SetPlaceHolder("clinic or customer name")
	tiers := make([]string, 0, len(app.Tiers()))
	for _, t := range app.Tiers() {
		tiers = append(tiers, string(t))
	}
	k.tier = widget.NewSelect(tiers, nil)
	k.tier.PlaceHolder = "tier (default paygo)"
	k.create = widget.NewButton("Create key", k.createKey)
	k.newKey.Selectable = true // selectable and copyable, not editable
	k.newKey.TextStyle = fyne.TextStyle{Monospace: true}
	k.copyKey = widget.NewButton("Copy", k.copyToClipboard)
	k.copyKey.Disable()
	k.content = container.NewVBox(
		widget.NewLabelWithStyle("New API key", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewGridWithColumns(3, k.customer, k.tier, k.create),
		widget.NewLabel("The key is shown only once: copy it now."),
		container.NewBorder(nil, nil, nil, k.copyKey, k.newKey),
		k.status, widget.NewSeparator(),
		widget.NewLabelWithStyle("Keys (this month's billable calls, tier and charges per customer)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		k.list,
	)
	k.refresh()
	return k
}

func (k *keysTab) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), keyOpTimeout)
}

func (k *keysTab) createKey() {
	ctx, cancel := k.ctx()
	defer cancel()
	key, info, err := k.u.svc.Accounts.CreateKey(ctx, k.customer.Text, app.Tier(k.tier.Selected))
	if err != nil {
		k.status.SetText("Could not create the key: " + err.Error())
		return
	}
	k.newKey.SetText(key)
	k.copyKey.Enable()
	k.status.SetText(fmt.Sprintf("Created key %s for %s (%s).", info.Prefix, info.Customer, info.Tier))
	k.refresh()
}

func (k *keysTab) copyToClipboard() {
	if a := fyne.CurrentApp(); a != nil && k.newKey.Text != "" {
		a.Clipboard().SetContent(k.newKey.Text)
		k.status.SetText("Key copied to the clipboard.")
	}
}

func (k *keysTab) revoke(prefix string) {
	ctx, cancel := k.ctx()
	defer cancel()
	if _, err := k.u.svc.Accounts.RevokeKey(ctx, prefix); err != nil {
		k.status.SetText("Could not revoke " + prefix + ": " + err.Error())
		return
	}
	k.status.SetText("Revoked key " + prefix + ".")
	k.refresh()
}

// refresh rebuilds the key list.
func (k *keysTab) refresh() {
	ctx, cancel := k.ctx()
	defer cancel()
	keys, err := k.u.svc.Accounts.ListKeys(ctx)
	if err != nil {
		k.list.Objects = []fyne.CanvasObject{widget.NewLabel("Could not list keys: " + err.Error())}
		k.list.Refresh()
		return
	}
	usage := map[string]string{}
	rows := make([]fyne.CanvasObject, 0, len(keys)+1)
	if len(keys) == 0 {
		rows = append(rows, widget.NewLabel("No keys yet."))
	}
	for _, ki := range keys {
		if _, ok := usage[ki.Customer]; !ok {
			usage[ki.Customer] = "usage unavailable"
			if st, err := k.u.svc.Accounts.MonthlyStatement(ctx, ki.Customer); err == nil {
				usage[ki.Customer] = statementText(st)
			}
		}
		text := fmt.Sprintf("%s  %s  %s  created %s  %s  (%s)", ki.Prefix, ki.Customer, ki.Tier, ki.Created, ki.Status, usage[ki.Customer])
		btn := widget.NewButton("Revoke", func() { k.revoke(ki.Prefix) })
		if ki.Status != "active" {
			btn.Disable()
		}
		rows = append(rows, container.NewBorder(nil, nil, nil, btn, widget.NewLabel(text)))
	}
	k.list.Objects = rows
	k.list.Refresh()
}

// statementText is a monthly statement in words.
func statementText(st app.Statement) string {
	return fmt.Sprintf("%s: %d billable calls, %s tier, %s", st.Month, st.Usage, st.Tier, st.Charges)
}
