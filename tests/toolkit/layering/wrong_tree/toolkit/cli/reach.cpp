// Wrong on purpose: record/recorder/ is private to record. The session's header is public.
#include "record/recorder/real.hpp"
#include "record/session.hpp"
