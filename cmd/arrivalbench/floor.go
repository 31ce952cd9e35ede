package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// singlePacket is the referee's own floor: one HTTP/2 connection, settings
// exchanged, then a burst of n POST /hit/{key} whose every frame (HEADERS,
// then an empty DATA that ends the stream, for each request) leaves in one
// write. Nothing a client does can arrive tighter than one write read by
// one server connection, so its spread is the floor a burst is held to.
// It waits for all n answers and fails unless each is 200.
func singlePacket(base string, n int, key string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetNoDelay(true)
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))

	var out bytes.Buffer
	fr := http2.NewFramer(&out, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	out.WriteString(http2.ClientPreface)
	if err := errors.Join(
		fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20}),
		fr.WriteWindowUpdate(0, 1<<30-65535),
	); err != nil {
		return err
	}
	if _, err := conn.Write(out.Bytes()); err != nil {
		return err
	}
	out.Reset()
	// The server's settings first: its stream limit must allow n.
	for settled := false; !settled; {
		f, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("read the referee's settings: %w", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); ok && int(v) < n {
				return fmt.Errorf("the referee allows %d streams a connection, fewer than %d", v, n)
			}
			if err := fr.WriteSettingsAck(); err != nil {
				return err
			}
			settled = true
		}
	}

	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	for i := range n {
		hbuf.Reset()
		for _, f := range []hpack.HeaderField{
			{Name: ":method", Value: "POST"},
			{Name: ":scheme", Value: "http"},
			{Name: ":authority", Value: u.Host},
			{Name: ":path", Value: "/hit/" + key},
			{Name: "content-length", Value: "0"},
		} {
			_ = enc.WriteField(f)
		}
		id := uint32(2*i + 1)
		if err := errors.Join(
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}),
			fr.WriteData(id, true, nil),
		); err != nil {
			return err
		}
	}
	// The settings ACK goes with the burst: one write in all.
	if _, err := conn.Write(out.Bytes()); err != nil {
		return err
	}
	out.Reset()

	answered := 0
	for answered < n {
		f, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("%d of %d answers read: %w", answered, n, err)
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			code, _ := strconv.Atoi(f.PseudoValue("status"))
			if code != 200 {
				return fmt.Errorf("stream %d answered %d", f.StreamID, code)
			}
			if f.StreamEnded() {
				answered++
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				answered++
			}
		case *http2.RSTStreamFrame:
			return fmt.Errorf("stream %d reset: %v", f.StreamID, f.ErrCode)
		case *http2.GoAwayFrame:
			return fmt.Errorf("referee went away: %v", f.ErrCode)
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
				if _, err := conn.Write(out.Bytes()); err != nil {
					return err
				}
				out.Reset()
			}
		}
	}
	return nil
}
