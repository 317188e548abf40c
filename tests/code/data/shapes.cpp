#include <vector>
#include "buffer.h"

namespace geo {

// A shape with an area.
class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    double twice() const { return 2 * area(); }
};

struct Point {
    double x;
    double y;
};

template <typename T>
T clamp(T value, T low, T high) {
    return value < low ? low : (value > high ? high : value);
}

double total(const std::vector<Shape*>& shapes);

}  // namespace geo

double geo::total(const std::vector<geo::Shape*>& shapes) {
    double sum = 0;
    for (auto* s : shapes) sum += s->area();
    return sum;
}

class Circle : public geo::Shape {
public:
    explicit Circle(double r) : r_(r) {}
    double area() const override;
private:
    double r_;
};

double Circle::area() const {
    return 3.14159 * r_ * r_;
}
