// Streams and events of asynchronous devices (device.h, Note [Asynchronous devices]): each
// thread's current stream per device, stream and event handles over a plugin's own, and
// record_stream.
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "runtime/device_registry.h"
#include "runtime/handles.h"
#include "runtime/plugin_device.h"
#include "runtime/runtime_state.h"

using tessera::capi::PluginDevice;

// The last reference to a stream or event the plugin made destroys it through that plugin,
// also once the plugin is unloaded: the handle's owner reference keeps its code mapped (as
// memory's does for free), and no other instance ever sees the handle.
tsr_stream::~tsr_stream() {
  if (native != nullptr && plugin != nullptr && plugin->iface().stream_destroy != nullptr) {
    plugin->iface().stream_destroy(plugin->iface().context, device.index, native);
  }
}

tsr_event::~tsr_event() {
  if (native != nullptr && plugin != nullptr && plugin->iface().event_destroy != nullptr) {
    plugin->iface().event_destroy(plugin->iface().context, device.index, native);
  }
}

namespace tessera {
namespace capi {
namespace {

// Note [Current streams]
// A thread's current streams are thread-local: one entry per device whose current stream is
// not its default one, so that the common case (no stream ever set) is an empty list and
// stream_current_native, which every kernel launch on an asynchronous device calls, is one
// thread-local load. Each entry holds a reference: a stream stays alive (and its plugin
// loaded) while it is some thread's current stream, until the thread sets another or exits.
// An entry whose plugin instance no longer provides its device type is skipped: its handle
// must never reach another plugin.
struct CurrentStreams {
  absl::InlinedVector<StreamRef, 2> streams;
};
thread_local CurrentStreams tls_current;

StreamRef* FindCurrent(Device device) {
  for (StreamRef& s : tls_current.streams) {
    if (s->device == device) return &s;
  }
  return nullptr;
}

StreamRef DefaultStream(Device device, PluginDevice* plugin) {
  StreamRef stream = StreamRef::Make();
  stream->device = device;
  stream->plugin = plugin;
  if (plugin != nullptr) stream->owner = plugin->Owner();
  return stream;
}

absl::Status CheckHandle(const void* handle, const char* what, const char* fn) {
  if (handle == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: expected %s, got NULL", fn, what));
  }
  return absl::OkStatus();
}

// CheckLive: the stream's or event's plugin instance still provides its device.
absl::Status CheckLive(PluginDevice* plugin, Device device, const char* what, const char* fn) {
  if (plugin != nullptr && !plugin->Current()) {
    return plugin->NotCurrentError(device, absl::StrFormat("%s: %s", fn, what));
  }
  return absl::OkStatus();
}

absl::Status SameDevice(Device a, const char* a_what, Device b, const char* b_what,
                        const char* fn) {
  if (a == b) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s is of %s but %s is of %s; expected both of one device", fn, a_what,
                      DeviceToString(a), b_what, DeviceToString(b)));
}

// DeviceStatus passes a plugin's error on, naming the function and the device and quoting the
// device's own text (Note [Asynchronous devices]).
absl::Status DeviceStatus(tsr_error* error, const char* fn, Device device) {
  absl::Status status = StatusFrom(error);
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrFormat("%s: %s: %s", fn, DeviceToString(device), status.message()));
}

// Unimplemented is the error for a stream or event function that `device` cannot provide.
absl::Status Unimplemented(const char* fn, Device device, PluginDevice* plugin, const char* slot,
                           const char* what) {
  if (plugin == nullptr) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: %s has no %s (it is synchronous: use its default stream)", fn,
                        DeviceToString(device), what));
  }
  return absl::UnimplementedError(
      absl::StrFormat("%s: %s has no %s: its plugin '%s' provides no %s", fn,
                      DeviceToString(device), what, plugin->plugin_name(), slot));
}

// Target: what every entry point that hands out a new stream or event of a device checks
// first: the output pointer (then cleared), the device, and the plugin that gives its streams.
struct Target {
  Device device;
  PluginDevice* plugin;
};
template <typename Out>
absl::StatusOr<Target> TargetFor(tsr_device device, Out** out, const char* fn) {
  TSR_RETURN_IF_ERROR(CheckHandle(out, "an output pointer", fn));
  *out = nullptr;
  TSR_ASSIGN_OR_RETURN(const Device d, ToDevice(device, fn));
  TSR_ASSIGN_OR_RETURN(PluginDevice* const plugin, DeviceForStreams(d, fn));
  return Target{d, plugin};
}

// WithPlugin runs `call` on the plugin behind a stream or event of `device` inside its gate.
template <typename F>
absl::Status WithPlugin(PluginDevice* plugin, Device device, const char* fn, F&& call) {
  absl::Status status;
  if (!plugin->Enter(device, fn, &status)) return status;
  GateExit exit(plugin->gate());
  return DeviceStatus(call(plugin->iface()), fn, device);
}

}  // namespace
}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_stream_create(tsr_device device, tsr_stream** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stream_create";
    absl::StatusOr<Target> target = TargetFor(device, out, fn);
    if (!target.ok()) return ToError(target.status());
    const Device d = target->device;
    PluginDevice* const p = target->plugin;
    if (p == nullptr || p->iface().stream_create == nullptr) {
      return ToError(Unimplemented(fn, d, p, "stream_create", "streams"));
    }
    void* native = nullptr;
    absl::Status status = WithPlugin(p, d, fn, [&](const tsr_device_interface& f) {
      return f.stream_create(f.context, d.index, &native);
    });
    if (!status.ok()) return ToError(status);
    StreamRef stream = DefaultStream(d, p);
    stream->native = native;
    *out = stream.Leak();
    return nullptr;
  });
}

tsr_error* tsr_stream_get_default(tsr_device device, tsr_stream** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stream_get_default";
    absl::StatusOr<Target> target = TargetFor(device, out, fn);
    if (!target.ok()) return ToError(target.status());
    const Device d = target->device;
    PluginDevice* const p = target->plugin;
    *out = DefaultStream(d, p).Leak();
    return nullptr;
  });
}

tsr_error* tsr_stream_get_current(tsr_device device, tsr_stream** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stream_get_current";
    absl::StatusOr<Target> target = TargetFor(device, out, fn);
    if (!target.ok()) return ToError(target.status());
    const Device d = target->device;
    PluginDevice* const p = target->plugin;
    if (StreamRef* current = FindCurrent(d); current != nullptr && (*current)->plugin == p) {
      *out = StreamRef(*current).Leak();
      return nullptr;
    }
    *out = DefaultStream(d, p).Leak();
    return nullptr;
  });
}

tsr_error* tsr_stream_set_current(tsr_stream* stream) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stream_set_current";
    if (absl::Status s = CheckHandle(stream, "a stream", fn); !s.ok()) return ToError(s);
    if (absl::Status s = CheckLive(stream->plugin, stream->device, "the stream", fn); !s.ok()) {
      return ToError(s);
    }
    StreamRef* current = FindCurrent(stream->device);
    if (stream->native == nullptr) {  // the default stream: no entry (Note [Current streams])
      if (current != nullptr) {
        std::swap(*current, tls_current.streams.back());
        tls_current.streams.pop_back();
      }
      return nullptr;
    }
    StreamRef shared = StreamRef::Share(stream);
    if (current != nullptr) {
      std::swap(*current, shared);  // the old one is released after the swap, outside the list
    } else {
      tls_current.streams.push_back(std::move(shared));
    }
    return nullptr;
  });
}

void* tsr_stream_current_native(tsr_device device) {
  for (const StreamRef& s : tls_current.streams) {
    if (static_cast<int32_t>(s->device.type) == device.type && s->device.index == device.index) {
      return s->plugin->Current() ? s->native : nullptr;
    }
  }
  return nullptr;
}

void* tsr_stream_native(const tsr_stream* stream) { return stream ? stream->native : nullptr; }

tsr_device tsr_stream_device(const tsr_stream* stream) {
  if (stream == nullptr) return tsr_device{TSR_DEVICE_CPU, 0};
  return tsr_device{static_cast<int32_t>(stream->device.type), stream->device.index};
}

tsr_error* tsr_stream_synchronize(tsr_stream* stream) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stream_synchronize";
    if (absl::Status s = CheckHandle(stream, "a stream", fn); !s.ok()) return ToError(s);
    PluginDevice* p = stream->plugin;
    if (p == nullptr) return nullptr;  // the CPU's work is done when its call returns
    if (absl::Status s = CheckLive(p, stream->device, "the stream", fn); !s.ok()) {
      return ToError(s);
    }
    const int32_t index = stream->device.index;
    return ToError(WithPlugin(p, stream->device, fn, [&](const tsr_device_interface& f) {
      return f.stream_synchronize != nullptr
                 ? f.stream_synchronize(f.context, index, stream->native)
                 : f.synchronize(f.context, index);
    }));
  });
}

tsr_error* tsr_stream_wait_event(tsr_stream* stream, tsr_event* event) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stream_wait_event";
    if (absl::Status s = CheckHandle(stream, "a stream", fn); !s.ok()) return ToError(s);
    if (absl::Status s = CheckHandle(event, "an event", fn); !s.ok()) return ToError(s);
    if (absl::Status s = SameDevice(stream->device, "the stream", event->device, "the event", fn);
        !s.ok()) {
      return ToError(s);
    }
    if (absl::Status s = CheckLive(event->plugin, event->device, "the event", fn); !s.ok()) {
      return ToError(s);
    }
    if (stream->plugin != event->plugin) {
      return ToError(
          stream->plugin->NotCurrentError(stream->device, absl::StrFormat("%s: the stream", fn)));
    }
    if (!event->recorded.load(std::memory_order_acquire)) return nullptr;  // nothing to wait for
    PluginDevice* p = event->plugin;
    const int32_t index = event->device.index;
    return ToError(WithPlugin(p, event->device, fn, [&](const tsr_device_interface& f) {
      if (f.stream_wait_event != nullptr) {
        return f.stream_wait_event(f.context, index, stream->native, event->native);
      }
      // The slot's default: the host waits, and so does everything queued after this call.
      return f.event_synchronize != nullptr ? f.event_synchronize(f.context, index, event->native)
                                            : f.synchronize(f.context, index);
    }));
  });
}

void tsr_stream_release(tsr_stream* stream) {
  if (stream != nullptr) stream->Release();
}

tsr_error* tsr_event_create(tsr_device device, tsr_event** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_event_create";
    absl::StatusOr<Target> target = TargetFor(device, out, fn);
    if (!target.ok()) return ToError(target.status());
    const Device d = target->device;
    PluginDevice* const p = target->plugin;
    if (p == nullptr || p->iface().event_create == nullptr || p->iface().event_record == nullptr) {
      return ToError(Unimplemented(fn, d, p, "event_create and event_record", "events"));
    }
    void* native = nullptr;
    absl::Status status = WithPlugin(p, d, fn, [&](const tsr_device_interface& f) {
      return f.event_create(f.context, d.index, &native);
    });
    if (!status.ok()) return ToError(status);
    Ref<tsr_event> event = Ref<tsr_event>::Make();
    event->device = d;
    event->plugin = p;
    event->native = native;
    event->owner = p->Owner();
    *out = event.Leak();
    return nullptr;
  });
}

tsr_error* tsr_event_record(tsr_event* event, tsr_stream* stream) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_event_record";
    if (absl::Status s = CheckHandle(event, "an event", fn); !s.ok()) return ToError(s);
    if (absl::Status s = CheckLive(event->plugin, event->device, "the event", fn); !s.ok()) {
      return ToError(s);
    }
    void* native_stream = nullptr;
    if (stream != nullptr) {
      if (absl::Status s = SameDevice(event->device, "the event", stream->device, "the stream", fn);
          !s.ok()) {
        return ToError(s);
      }
      if (stream->plugin != event->plugin) {
        return ToError(
            stream->plugin->NotCurrentError(stream->device, absl::StrFormat("%s: the stream", fn)));
      }
      native_stream = stream->native;
    } else {
      native_stream = tsr_stream_current_native(
          tsr_device{static_cast<int32_t>(event->device.type), event->device.index});
    }
    const int32_t index = event->device.index;
    absl::Status status =
        WithPlugin(event->plugin, event->device, fn, [&](const tsr_device_interface& f) {
          return f.event_record(f.context, index, event->native, native_stream);
        });
    if (!status.ok()) return ToError(status);
    event->recorded.store(true, std::memory_order_release);
    return nullptr;
  });
}

tsr_error* tsr_event_synchronize(tsr_event* event) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_event_synchronize";
    if (absl::Status s = CheckHandle(event, "an event", fn); !s.ok()) return ToError(s);
    if (absl::Status s = CheckLive(event->plugin, event->device, "the event", fn); !s.ok()) {
      return ToError(s);
    }
    if (!event->recorded.load(std::memory_order_acquire)) return nullptr;
    const int32_t index = event->device.index;
    return ToError(WithPlugin(event->plugin, event->device, fn, [&](const tsr_device_interface& f) {
      return f.event_synchronize != nullptr ? f.event_synchronize(f.context, index, event->native)
                                            : f.synchronize(f.context, index);
    }));
  });
}

void tsr_event_release(tsr_event* event) {
  if (event != nullptr) event->Release();
}

tsr_error* tsr_tensor_record_stream(tsr_tensor* tensor, tsr_stream* stream) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_tensor_record_stream";
    if (absl::Status s = CheckHandle(tensor, "a tensor", fn); !s.ok()) return ToError(s);
    if (absl::Status s = CheckHandle(stream, "a stream", fn); !s.ok()) return ToError(s);
    Tensor t = Borrow(tensor);
    if (absl::Status s = SameDevice(t.device(), "the tensor", stream->device, "the stream", fn);
        !s.ok()) {
      return ToError(s);
    }
    PluginDevice* p = stream->plugin;
    if (p == nullptr) return nullptr;  // CPU and meta: nothing runs later
    if (absl::Status s = CheckLive(p, stream->device, "the stream", fn); !s.ok()) {
      return ToError(s);
    }
    if (Orphaned(t)) return ToError(OrphanedError(t, fn));
    void* memory = t.impl()->storage()->data();
    // Nothing to keep: no memory, or a synchronous device (its work is done when a call returns).
    if (memory == nullptr || !p->asynchronous()) return nullptr;
    if (p->iface().record_stream == nullptr) {
      p->RecordStream(memory, StreamRef::Share(stream));  // the slot's documented default
      return nullptr;
    }
    const int32_t index = stream->device.index;
    return ToError(WithPlugin(p, stream->device, fn, [&](const tsr_device_interface& f) {
      return f.record_stream(f.context, index, memory, stream->native);
    }));
  });
}

}  // extern "C"
