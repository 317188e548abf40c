#pragma once
struct buffer;
