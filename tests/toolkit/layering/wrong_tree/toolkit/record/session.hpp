// A public header of record.
#pragma once
