// The recorder's own header (private to record).
#pragma once
