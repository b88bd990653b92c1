package browser

import "context"

// Tab opens a new tab on b for a page of the caller's own (the HTML report's test
// opens its file in one); cancel closes it. The context is a chromedp context: run
// actions and listen to the tab's events on it.
func (b *Browser) Tab() (context.Context, context.CancelFunc, error) {
	return b.tab()
}
