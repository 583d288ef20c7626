// The trace format, a toolkit component.
#pragma once
