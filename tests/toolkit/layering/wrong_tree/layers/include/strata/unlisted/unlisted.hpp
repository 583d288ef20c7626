// A layer folder the fixture page does not name.
#pragma once
